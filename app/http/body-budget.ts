import { Transform, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from './http-error.js';

/**
 * A bound on the bytes of request bodies held in memory at once by the routes that share
 * it, whoever sends them: a body must be read whole before its credential can be checked
 * (a webhook's signature is over its bytes), so each body's own limit alone would let ten
 * senders hold ten limits. A body that would take the total past the budget is refused with
 * 503 at once — before it is read when its Content-Length says so, else at the chunk that
 * crosses; one without a Content-Length is refused (413) past a far smaller size; and one
 * that arrives slower than `deadlineMs` with 408, so a trickle cannot
 * keep its share for ever. A body's bytes count until its answer is sent.
 */
export class BodyBudget {
  private held = 0;

  constructor(
    private readonly options: {
      /** Bytes of bodies held at once, across every request using this budget. */
      bytes: number;
      /**
       * The most one body may hold when it does not declare its length (chunked): it cannot
       * reserve its share up front, so it is held to far less than the route's limit.
       */
      unlengthedBytes: number;
      /** How long one body may take to arrive. */
      deadlineMs: number;
    },
  ) {}

  /** A route's `preParsing` hook: the body, counted against the budget as it streams. */
  readonly preParsing = async (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: Readable,
  ): Promise<Readable> => {
    let taken = 0;
    let answered = false;
    const take = (bytes: number): boolean => {
      // Bytes still passing once the answer is out are never counted: nothing would give them back.
      if (answered || this.held + bytes > this.options.bytes) return false;
      this.held += bytes;
      taken += bytes;
      return true;
    };
    const declared = Number(request.headers['content-length']);
    // Fastify answers 413 to a declared length over the route's limit before reading a byte.
    if (declared > (request.routeOptions.bodyLimit ?? Infinity)) return payload;
    const reserved = Number.isSafeInteger(declared) && declared >= 0;
    if (reserved && !take(declared)) throw this.busy();
    const metered = new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        // A declared length was reserved whole; Node's parser never delivers more than it.
        if (!reserved && taken + chunk.length > this.options.unlengthedBytes) {
          done(
            new HttpError(
              413,
              `body: is larger than ${this.options.unlengthedBytes} bytes, the most a body without a Content-Length may hold here`,
              'body',
            ),
          );
        } else if (!reserved && !take(chunk.length)) done(this.busy());
        // A copy of its own: a chunk is a view of the socket's whole read buffer, which
        // would otherwise stay in memory with it, uncounted.
        else done(null, Buffer.from(chunk));
      },
    });
    // Fastify listens for the stream's errors only when it reads the body; one refused
    // before (415) must not turn the deadline's error into an uncaught exception.
    metered.on('error', () => undefined);
    const deadline = setTimeout(() => {
      metered.destroy(
        new HttpError(408, `body: did not arrive within ${this.options.deadlineMs / 1000} s`, 'body'),
      );
    }, this.options.deadlineMs);
    metered.once('close', () => clearTimeout(deadline));
    payload.once('error', (error) => metered.destroy(error));
    // Given back once the answer is sent or the connection is gone, whichever comes first.
    reply.raw.once('close', () => {
      answered = true;
      clearTimeout(deadline);
      this.held -= taken;
      taken = 0;
    });
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
