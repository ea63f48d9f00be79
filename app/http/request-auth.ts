import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

/** A route's credential check, made before its body is read, and what it found. */
export interface RequestAuth<Caller> {
  /**
   * The route's `onRequest` hook: the credential is checked before a byte of the body is
   * read or parsed, so a caller without one is answered 401 at once and its body — however
   * large — is never buffered (the connection is closed instead: build-server.ts).
   */
  onRequest: onRequestAsyncHookHandler;
  /** The caller the hook authenticated; only for routes that have the hook. */
  of(request: FastifyRequest): Caller;
}

/** Makes a route's `onRequest` credential check from how a request is authenticated. */
export function requestAuth<Caller>(
  authenticate: (request: FastifyRequest) => Promise<Caller>,
): RequestAuth<Caller> {
  const callers = new WeakMap<FastifyRequest, Caller>();
  return {
    async onRequest(request) {
      callers.set(request, await authenticate(request));
    },
    of(request) {
      if (!callers.has(request)) {
        throw new Error(
          `${request.method} ${request.routeOptions.url ?? ''} has no onRequest credential check`,
        );
      }
      return callers.get(request) as Caller;
    },
  };
}
