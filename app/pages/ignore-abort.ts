/**
 * A rejection handler that swallows the rejection of a wait `signal` ended (the stream's
 * client went away, the server closes) and rethrows any other.
 */
export function ignoreAbort(signal: AbortSignal): (error: unknown) => void {
  return (error) => {
    if (!signal.aborted) throw error;
  };
}
