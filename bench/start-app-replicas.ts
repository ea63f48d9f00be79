import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, fluksio, lineOf } from './fluksio-command.js';

/** `fluksio app` processes sharing one database and Redis prefix. */
export interface AppReplicas {
  urls: string[];
  /** SIGTERMs every process and waits for it to end. */
  close(): Promise<void>;
}

/**
 * Starts `count` built `fluksio app --role all` processes on free ports with the same
 * `env` (DATABASE_URL, REDIS_URL, FLUKSIO_QUEUE_PREFIX …), each with a data directory of
 * its own, once every one listens.
 */
export async function startAppReplicas(count: number, env: Record<string, string>): Promise<AppReplicas> {
  const dirs: string[] = [];
  const children: ReturnType<typeof fluksio>[] = [];
  const close = async (): Promise<void> => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((child) => exited(child)));
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  };
  try {
    const urls = await Promise.all(
      Array.from({ length: count }, async () => {
        const dataDir = await mkdtemp(
          join(tmpdir(), `fluksio-bench-replica-${randomBytes(2).toString('hex')}-`),
        );
        dirs.push(dataDir);
        const child = fluksio(['app', '--role', 'all'], dataDir, {
          LOG_LEVEL: 'warn',
          HOST: '127.0.0.1',
          PORT: '0',
          ...env,
          FLUKSIO_DATA_DIR: dataDir,
        });
        children.push(child);
        const [, url] = await lineOf(child, /listening on (http\S+)/);
        return url as string;
      }),
    );
    return { urls, close };
  } catch (error) {
    await close();
    throw error;
  }
}
