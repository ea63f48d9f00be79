/**
 * A path that would read or write outside the workspace: absolute, climbing out with
 * `..`, or passing through a symlink that points outside (DESIGN §5). The message names
 * the path and the reason; callers prefix where the path came from (`stages.train.outs[0]: `).
 */
export class UnsafePathError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnsafePathError';
  }
}
