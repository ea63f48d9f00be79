/**
 * A request the control plane refuses, answered as `{ error, field }` with `statusCode`
 * (DESIGN §10). The message is the sentence a caller reads: what was wrong and what is
 * expected; `field` names the input at fault when there is one.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}
