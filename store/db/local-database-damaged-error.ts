/**
 * The embedded database's files do not open as a database (cut short, overwritten): PGlite
 * aborts while starting. Commands branch on it to say how to recover instead of failing
 * with PGlite's own message.
 */
export class LocalDatabaseDamagedError extends Error {
  constructor(
    readonly dataDir: string,
    options: { cause: unknown },
  ) {
    const why = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`The local database ${dataDir} is damaged: it does not start (${why})`, options);
    this.name = 'LocalDatabaseDamagedError';
  }
}
