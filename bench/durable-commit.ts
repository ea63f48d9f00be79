import postgres from 'postgres';

/** One durable PostgreSQL commit at a time, timed: the reference of the dispatch figures. */
export interface CommitReference {
  /** `synchronous_commit` as the server has it (`on`: each commit waits for its WAL flush). */
  synchronousCommit: string;
  /** Inserts one row in a transaction of its own; its round trip in ms. */
  time(): Promise<number>;
  /** Drops the table and closes the connection. */
  close(): Promise<void>;
}

/**
 * Opens the reference on a connection of its own to `databaseUrl`, with a table of its
 * own: timed between the samples it is compared with, it shares their load.
 */
export async function openCommitReference(databaseUrl: string): Promise<CommitReference> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const [setting] = await sql<{ synchronous_commit: string }[]>`show synchronous_commit`;
  await sql`create table bench_commit_reference (id bigserial primary key, at timestamptz not null default now())`;
  return {
    synchronousCommit: setting?.synchronous_commit ?? 'unknown',
    async time() {
      const started = performance.now();
      await sql`insert into bench_commit_reference default values`;
      return performance.now() - started;
    },
    async close() {
      await sql`drop table bench_commit_reference`;
      await sql.end();
    },
  };
}
