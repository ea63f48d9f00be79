import { Transform, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './http-error.js';

/**
 * A bound on the bytes of request bodies held in memory at once by the routes that share
 * it, whoever sends them: a body must be read whole before its credential can be checked
 * (a webhook's signature is over its bytes), so each body's own limit alone would let ten
 * senders hold ten limits. A body that would take the total past the budget is refused with
 * 503 at once — before it is read when its Content-Length says so, else at the chunk that
 * crosses — and one that arrives slower than `deadlineMs` with 408, so a trickle cannot
 * keep its share for ever. A body's bytes count until its answer is sent.
 */
export class BodyBudget {
  private held = 0;

  constructor(
    /** Bytes of bodies held at once, across every request using this budget. */
    private readonly bytes: number,
    /** How long one body may take to arrive. */
    private readonly deadlineMs: number,
  ) {}

  /** A route's `preParsing` hook: the body, counted against the budget as it streams. */
  readonly preParsing = async (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
  ): Promise<Readable> => {
    let taken = 0;
    const take = (bytes: number): boolean => {
      if (this.held + bytes > this.bytes) return false;
      this.held += bytes;
      taken += bytes;
      return true;
    };
    // Released once the answer is sent or the connection is gone, whichever comes first.
    reply.raw.once('close', () => {
      this.held -= taken;
      taken = 0;
    });
    const declared = Number(request.headers['content-length']);
    // Fastify answers 413 to a declared length over the route's limit before reading a byte.
    if (declared > (request.routeOptions.bodyLimit ?? Infinity)) return payload;
    const reserved = Number.isSafeInteger(declared) && declared >= 0;
    if (reserved && !take(declared)) throw this.busy();
    const metered = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        // A declared length was reserved whole; Node's parser never delivers more than it.
        if (!reserved && !take(chunk.length)) done(this.busy());
        else done(null, chunk);
      },
    });
    const deadline = setTimeout(() => {
      metered.destroy(new HttpError(408, `body: did not arrive within ${this.deadlineMs / 1000} s`, 'body'));
    }, this.deadlineMs);
    metered.once('close', () => clearTimeout(deadline));
    payload.once('error', (error) => metered.destroy(error));
    return payload.pipe(metered);
  };

  private busy(): HttpError {
    return new HttpError(
      503,
      'body: too many request bodies are arriving at once; send it again shortly',
      'body',
    );
  }
}
