/**
 * A webhook payload lacks what fluksio needs from it (a field missing or of the wrong
 * type). Processing it again cannot help, so the delivery is given up on at once, with
 * `problems` (`pull_request.head.sha: is required`) as its visible error.
 */
export class UnreadablePayloadError extends Error {
  constructor(
    readonly event: string,
    readonly problems: readonly string[],
  ) {
    super(`The ${event} payload cannot be read: ${problems.join('; ')}`);
    this.name = 'UnreadablePayloadError';
  }
}
