/**
 * The submit's INSERT found the API token it was given no longer able to queue the run
 * (revoked, read-only, or not for this repository): nothing was written. The caller reads
 * the token again to say which (authenticate-submitter.ts).
 */
export class SubmitterRefusedError extends Error {
  constructor() {
    super(
      'The API token may not queue this run (the insert found it revoked, read-only or not for this repository)',
    );
    this.name = 'SubmitterRefusedError';
  }
}
