/** A stage exited successfully but one of its declared outs does not exist (DESIGN §5). */
export class MissingOutError extends Error {
  constructor(
    /** The out as the pipeline declares it, relative to the pipeline's directory. */
    readonly path: string,
    readonly absPath: string,
    options?: ErrorOptions,
  ) {
    super(
      `"${path}" was not produced: the stage exited successfully but nothing exists at ${absPath}`,
      options,
    );
    this.name = 'MissingOutError';
  }
}
