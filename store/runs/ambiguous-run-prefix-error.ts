/** A run id prefix that matches more than one run; the CLI answers it as bad input. */
export class AmbiguousRunPrefixError extends Error {
  constructor(
    readonly prefix: string,
    /** Matching run ids, in id order (at most ten). */
    readonly candidates: readonly string[],
    /** Whether more runs match than `candidates` lists. */
    readonly more: boolean,
  ) {
    const listed = candidates.join(', ') + (more ? ' and more' : '');
    super(`Run id "${prefix}" matches more than one run (${listed}); give more characters`);
    this.name = 'AmbiguousRunPrefixError';
  }
}
