import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';

const ADMIN_URL = process.env.FLUKSIO_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.FLUKSIO_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A database, a Redis key prefix and a data directory of one benchmark's own. */
export interface ScratchEnvironment {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  dataDir: string;
  /** Drops the database, deletes the prefix's Redis keys and removes the directory. */
  close(): Promise<void>;
}

/** Makes a benchmark's scratch environment on the local PostgreSQL and Redis. */
export async function openScratchEnvironment(label: string): Promise<ScratchEnvironment> {
  const name = `fluksio_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const dataDir = await mkdtemp(join(tmpdir(), `fluksio-bench-${label}-`));
  const prefix = `fluksio-bench-${randomBytes(4).toString('hex')}`;
  return {
    databaseUrl: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    redisUrl: REDIS_URL,
    prefix,
    dataDir,
    async close() {
      const redis = new Redis(REDIS_URL);
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
      await redis.quit();
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
