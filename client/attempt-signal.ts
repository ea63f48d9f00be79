/** The signal one HTTP attempt runs under: the caller's, and the attempt's own time limit. */
export interface AttemptSignal {
  signal: AbortSignal;
  /** Stops the timer and forgets the caller's signal; call it once the attempt's body is read. */
  release(): void;
}

/**
 * Aborts when `caller` does (with its reason) or after `timeoutMs` (with a `TimeoutError`,
 * as `AbortSignal.timeout` would). Not `AbortSignal.any`: a runner's signal lives for days
 * and each call of it keeps a little memory for as long as that signal lives (Node 20);
 * these listeners are removed by release().
 */
export function attemptSignal(caller: AbortSignal | undefined, timeoutMs: number): AttemptSignal {
  const controller = new AbortController();
  const onCallerAbort = (): void => controller.abort(caller?.reason);
  const timer = setTimeout(() => {
    controller.abort(new DOMException(`The request took longer than ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  timer.unref();
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    release() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}
