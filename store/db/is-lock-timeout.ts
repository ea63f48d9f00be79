/**
 * Whether `error` (or an error it wraps, as drizzle wraps the driver's) is PostgreSQL's
 * `lock_not_available` (55P03): a `lock_timeout` ran out or a `NOWAIT` lock was held.
 */
export function isLockTimeout(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as Error & { code?: unknown }).code === '55P03') return true;
  }
  return false;
}
