import { randomBytes } from 'node:crypto';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as tables from '../../schemas/tables/index.js';
import type { Database } from '../../store/db/database.js';
import { migrateDatabase } from '../../store/db/migrate-database.js';
import { migrationsDigest } from '../../store/db/migrations-digest.js';
import { preparingStatements } from '../../store/db/preparing-statements.js';

/** The cluster tests use; its `postgres` database is where databases are created from. */
const ADMIN_URL = process.env.FLUKSIO_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  /** Connection URL of this test's own database. */
  url: string;
  db: Database;
  /** Disconnects and drops the database. */
  close(): Promise<void>;
}

let template: Promise<string> | undefined;

/**
 * A fresh, migrated PostgreSQL database of its own (~100 ms), cloned from a template
 * database that is migrated once per set of migrations; with `empty`, one with no tables
 * at all (for testing the migrations themselves). Call `close()` after the tests.
 */
export async function createTestDatabase({ empty = false }: { empty?: boolean } = {}): Promise<TestDatabase> {
  const templateName = empty ? 'template0' : await (template ??= ensureTemplate());
  const name = `fluksio_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdmin((admin) => admin.unsafe(`create database "${name}" template "${templateName}"`));
  const url = databaseUrl(name);
  const client = postgres(url, { max: 4, onnotice: () => {} });
  return {
    url,
    db: drizzle({ client: preparingStatements(client), schema: tables }),
    close: async () => {
      await client.end();
      await withAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
    },
  };
}

/**
 * Makes `fluksio_template_<digest of drizzle/>` if it is missing. Vitest runs test files in
 * parallel processes, so the check-and-build holds an advisory lock, and the template is
 * built under a temporary name and renamed when complete: a crashed build leaves no
 * half-migrated template behind.
 */
async function ensureTemplate(): Promise<string> {
  const templateName = `fluksio_template_${await migrationsDigest()}`;
  await withAdmin(async (admin) => {
    await admin`select pg_advisory_lock(hashtext('fluksio test template'))`;
    try {
      const [exists] = await admin`select 1 from pg_database where datname = ${templateName}`;
      if (exists) return;
      const buildName = `${templateName}_build_${process.pid}`;
      await admin.unsafe(`drop database if exists "${buildName}"`);
      await admin.unsafe(`create database "${buildName}"`);
      const client = postgres(databaseUrl(buildName), { max: 1, onnotice: () => {} });
      try {
        await migrateDatabase(drizzle({ client, schema: tables }));
      } finally {
        await client.end();
      }
      await admin.unsafe(`alter database "${buildName}" rename to "${templateName}"`);
    } finally {
      await admin`select pg_advisory_unlock(hashtext('fluksio test template'))`;
    }
  });
  return templateName;
}

async function withAdmin<T>(work: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
