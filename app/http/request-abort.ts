import type { ServerResponse } from 'node:http';

/** Why a long-poll stops early: the caller hung up, or that or the control plane closing. */
export interface RequestAbort {
  /** Aborted when the caller hangs up. */
  hungUp: AbortSignal;
  /** Aborted when the caller hangs up or the control plane closes. */
  stop: AbortSignal;
  /** Removes the listeners; call it when the request is answered. */
  release(): void;
}

/**
 * The signals of a long-poll (a claim, a cancel watch). Not `AbortSignal.any`: each call
 * of it with the control plane's long-lived `closing` signal keeps a little memory for as
 * long as `closing` lives (about 60 bytes a call on Node 20), which a runner's long-polls
 * every few seconds grow without bound; plain listeners are removed when answered.
 */
export function requestAbort(response: ServerResponse, closing: AbortSignal): RequestAbort {
  const hungUp = new AbortController();
  const stop = new AbortController();
  const onHangUp = (): void => {
    hungUp.abort();
    stop.abort();
  };
  const onClosing = (): void => stop.abort();
  response.once('close', onHangUp);
  closing.addEventListener('abort', onClosing, { once: true });
  if (closing.aborted) stop.abort();
  return {
    hungUp: hungUp.signal,
    stop: stop.signal,
    release() {
      response.off('close', onHangUp);
      closing.removeEventListener('abort', onClosing);
    },
  };
}
