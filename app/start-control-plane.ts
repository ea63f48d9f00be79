import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { refuseForeignBlobStore } from './blobs/bind-blob-store.js';
import { openBlobStorage, settingOf } from './blobs/open-blob-storage.js';
import { S3BlobStorage } from './blobs/s3-blob-storage.js';
import { buildServer } from './build-server.js';
import { runsWorkers, servesApi, type ControlPlaneRole } from './control-plane-role.js';
import type { ControlPlaneSettings } from './control-plane-settings.js';
import { InvalidSettingsError } from './invalid-settings-error.js';
import { startGitHubApp } from './github/start-github-app.js';
import { openControlPlaneDatabase } from './open-control-plane-database.js';
import { RunBell, runBellChannel } from './run-bell.js';
import { doorbellChannel, RunDoorbell } from './run-doorbell.js';
import { startRunSweeper } from './run-sweeper.js';
import { messageOf } from '../core/text/message-of.js';

/** A running control plane. */
export interface ControlPlane {
  /** Where the HTTP API listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /**
   * Stops taking requests, then stops the sweeper and the GitHub App (its delivery worker
   * and outbox), then disconnects Redis and the database.
   */
  close(): Promise<void>;
}

/**
 * The pino logger of `fluksio app`: JSON lines on stdout at the settings' level, with
 * anything that could carry a token redacted.
 */
export function createControlPlaneLogger(settings: Pick<ControlPlaneSettings, 'logLevel'>): Logger {
  return pino({
    level: settings.logLevel,
    redact: ['req.headers.authorization', 'req.headers["x-fluksio-lease"]', 'headers.authorization'],
  });
}

/**
 * Starts `fluksio app`: opens and migrates the database (PostgreSQL at DATABASE_URL, else
 * embedded PGlite under the data directory), connects Redis, starts the GitHub App when it
 * checks the blob store (the S3 bucket answers), starts the GitHub App when it
 * is configured (webhook intake, delivery worker, outbox), the sweeper and the HTTP server.
 * Works without any GitHub credentials. A failure part-way closes what was opened and
 * rejects with the cause.
 */
export async function startControlPlane({
  settings,
  role = 'all',
  logger = createControlPlaneLogger(settings),
}: {
  settings: ControlPlaneSettings;
  /** What this process does (control-plane-role.ts). @defaultValue 'all' */
  role?: ControlPlaneRole;
  logger?: Logger;
}): Promise<ControlPlane> {
  if (role !== 'all' && settings.databaseUrl === null) {
    throw new InvalidSettingsError([
      `--role ${role}: the embedded PGlite database is one process's alone; set DATABASE_URL to run the web and worker roles as processes of their own`,
    ]);
  }
  const closers: (() => Promise<unknown>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) {
      await close().catch((error: unknown) => logger.error({ err: error }, 'error while shutting down'));
    }
  };
  try {
    const database = await openControlPlaneDatabase(settings, logger);
    closers.push(() => database.close());

    const redis = new Redis(settings.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
    redis.on('error', (error: Error) => logger.warn({ err: error }, 'Redis error'));
    closers.push(() => redis.quit().catch(() => redis.disconnect()));
    await redis.connect().catch((error: unknown) => {
      throw new Error(`Cannot reach Redis at REDIS_URL: ${messageOf(error)}`, {
        cause: error,
      });
    });

    // Before anything starts working: a bucket missing, misnamed or refused fails the start.
    const blobs = openBlobStorage(settings);
    if (blobs instanceof S3BlobStorage) closers.push(async () => blobs.close());
    await blobs.check().catch((error: unknown) => {
      throw new Error(`Cannot use the blob store ${blobs.location}: ${messageOf(error)}`, { cause: error });
    });
    // And one that holds another database's id (another deployment's store) fails it too.
    await refuseForeignBlobStore(database.db, blobs, settingOf(blobs));

    const doorbell = new RunDoorbell(redis, doorbellChannel(settings.queuePrefix), logger);
    // Rung by the GitHub triggers and the sweeper: a run they cancelled or timed out reaches
    // the runner's watch (and the run's open pages) in whichever replica it is parked.
    const runBell = new RunBell(redis, runBellChannel(settings.queuePrefix), logger);
    const github = settings.github
      ? await startGitHubApp({
          db: database.db,
          lock: database.lock,
          workers: runsWorkers(role),
          settings,
          github: settings.github,
          ringDoorbell: () => doorbell.ring(),
          ringRunBell: (runId) => runBell.ring(runId),
          logger,
        })
      : null;
    if (github) closers.push(() => github.close());

    if (runsWorkers(role)) {
      const sweeper = await startRunSweeper({
        db: database.db,
        settings,
        doorbell,
        logger,
        onRunChanged: (runId) => {
          void runBell.ring(runId);
          github?.onRunChanged(runId);
        },
      });
      closers.push(() => sweeper.close());
    }

    const server = buildServer({
      db: database.db,
      redis,
      settings,
      blobs,
      logger,
      api: servesApi(role),
      ...(github ? { github: github.server } : {}),
    });
    closers.push(() => server.close());
    const url = await server.listen({ host: settings.host, port: settings.port });
    logger.info(
      { url, role, dataDir: settings.dataDir, blobs: blobs.location, github: settings.github !== null },
      'control plane listening',
    );
    return { url, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
