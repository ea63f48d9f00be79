import type { Database } from './database.js';

/**
 * `build`'s result made once per database handle and kept while the handle lives: for
 * drizzle's prepared queries, which are built (SQL text and parameter list) once and then
 * only executed — building a query costs more JavaScript than running a prepared one costs
 * PostgreSQL. A transaction is a handle of its own, so it builds its own.
 */
export function perHandle<Made>(build: (db: Database) => Made): (db: Database) => Made {
  const made = new WeakMap<Database, Made>();
  return (db) => {
    const known = made.get(db);
    if (known !== undefined) return known;
    const fresh = build(db);
    made.set(db, fresh);
    return fresh;
  };
}
