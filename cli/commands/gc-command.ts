import { existsSync } from 'node:fs';
import { bindBlobStore } from '../../app/blobs/bind-blob-store.js';
import { openBlobStorage, settingOf } from '../../app/blobs/open-blob-storage.js';
import { S3BlobStorage } from '../../app/blobs/s3-blob-storage.js';
import { readBlobStoreSettings } from '../../app/control-plane-settings.js';
import { formatBytes } from '../../core/text/format.js';
import { messageOf } from '../../core/text/message-of.js';
import { readBlobManifest } from '../../app/blobs/read-blob-manifest.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { gcStore } from '../../store/blobs/gc-store.js';
import { deleteUnreferencedServerBlobs } from './delete-unreferenced-server-blobs.js';
import { reportUnreadableManifests } from './report-unreadable-manifests.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { collectLocalStore } from '../../local/collect-local-store.js';
import { localStorePaths } from '../../local/local-store-paths.js';
import { locateProject } from '../../local/locate-project.js';
import { userCacheDir } from '../../local/user-cache-dir.js';
import { openServerDatabase } from '../server/server-database.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { INTERRUPTED_EXIT } from '../process-interrupts.js';

export interface GcCommandOptions {
  keepDays: string;
  json?: boolean;
  /** `--server`: the control plane's store, even without DATABASE_URL or FLUKSIO_DATA_DIR. */
  server?: boolean;
  pipeline?: string;
}

/**
 * `fluksio gc [--keep-days N]`: forgets finished runs, cache entries and blob references
 * older than N days that nothing needs, then deletes the blob files no remaining record
 * names (and leftovers of interrupted uploads), all older than the same cut-off. It
 * collects the control plane's store on its host (DATABASE_URL or FLUKSIO_DATA_DIR set,
 * or --server) — its blob directory or its S3 bucket, as `fluksio app`'s settings say —
 * else this project's `.fluksio/`, never creating either. A directory out's manifest it
 * cannot read stops the deletion of blob files (their names are only there): it says which
 * and exits 1.
 */
export async function gcCommand(options: GcCommandOptions, io: CliIo): Promise<number> {
  const keepDays = Number(options.keepDays);
  if (!Number.isInteger(keepDays) || keepDays < 0)
    throw new UsageError(`--keep-days: "${options.keepDays}" is not a whole number ≥ 0`);
  const server = options.server || Boolean(io.env.DATABASE_URL) || Boolean(io.env.FLUKSIO_DATA_DIR);
  return server ? collectServer(keepDays, options, io) : collectLocal(keepDays, options, io);
}

async function collectLocal(keepDays: number, options: GcCommandOptions, io: CliIo): Promise<number> {
  const project = await locateProject(options.pipeline, io.cwd);
  if (!existsSync(localStorePaths(project.stateDir).journalDir)) {
    throw new UsageError(
      `No local store for ${project.displayPath}: nothing to collect (the control plane's store: run "fluksio gc --server" on its host)`,
    );
  }
  const result = await collectLocalStore(project.stateDir, {
    keepDays,
    templateRoot: userCacheDir(io.env),
    ...(io.signal ? { signal: io.signal } : {}),
    onWait: (holder) =>
      io.stderr.write(
        `Waiting for another fluksio process (${holder}) to finish with ${project.stateDir}…\n`,
      ),
  });
  if (result.stopped) {
    // Ctrl-C: what was done stands and the store is whole; the next gc does the rest.
    if (options.json) io.stdout.write(`${JSON.stringify({ store: 'local', ...result }, null, 2)}\n`);
    io.stderr.write(
      result.stopped === 'before-changes'
        ? `fluksio: gc stopped before removing anything; nothing was changed\n`
        : `fluksio: gc stopped: removed ${result.runsDeleted} runs, ${result.cacheEntriesDeleted} cache entries and ${result.blobsDeleted} blob files (${formatBytes(result.bytesFreed)}); the other unreferenced blob files stay until the next fluksio gc\n`,
    );
    return INTERRUPTED_EXIT;
  }
  if (options.json) io.stdout.write(`${JSON.stringify({ store: 'local', ...result }, null, 2)}\n`);
  else {
    io.stdout.write(
      `Removed ${result.runsDeleted} runs, ${result.cacheEntriesDeleted} cache entries and ${result.blobsDeleted} blob files (${formatBytes(result.bytesFreed)}) from ${project.displayPath}'s store${result.abandonedFoldersDeleted > 0 ? `, and ${result.abandonedFoldersDeleted} folders that interrupted runs left` : ''}; ${result.runsKept} runs remain.\n`,
    );
  }
  return reportUnreadableManifests(result.unreadableManifests, `${project.displayPath}'s store`, io);
}

async function collectServer(keepDays: number, options: GcCommandOptions, io: CliIo): Promise<number> {
  const storage = openBlobStorage(readBlobStoreSettings(io.env));
  // Before any row goes: with the bucket unreachable (misnamed, another endpoint, refused
  // credentials), rows would be forgotten while their objects stayed, or manifests unread.
  await storage.check().catch((error: unknown) => {
    if (storage instanceof S3BlobStorage) storage.close();
    throw new Error(
      `gc changed nothing: cannot use the blob store ${storage.location}: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  });
  const database = await openServerDatabase(io);
  // Another deployment's store would lose every blob this database does not name.
  await bindBlobStore(database.db, storage, settingOf(storage)).catch(async (error: unknown) => {
    await database.close();
    if (storage instanceof S3BlobStorage) storage.close();
    throw new Error(`gc changed nothing: ${messageOf(error)}`, { cause: error });
  });
  // Taken before gc reads the database: a blob stored after its snapshot is named by
  // nothing gc read, and must be younger than the cut-off to be kept.
  const cutoffMs = Date.now() - keepDays * 86_400_000;
  let result;
  let blobsDeleted = 0;
  try {
    result = await gcStore({
      db: database.db,
      keepDays,
      readManifest: (digest) => readBlobManifest(storage, digest as BlobDigest),
    });
    // The database stays open: each batch of blobs is deleted under its deletion guard.
    if (result.unreadableManifests.length === 0) {
      ({ blobsDeleted } = await deleteUnreferencedServerBlobs({
        db: database.db,
        storage,
        live: result.liveDigests,
        cutoffMs,
      }));
    }
  } finally {
    await database.close();
    if (storage instanceof S3BlobStorage) storage.close();
  }
  const summary = { ...result, liveDigests: result.liveDigests.size, blobsDeleted, store: storage.location };
  if (options.json) io.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    io.stdout.write(
      `Removed ${result.runsDeleted} runs, ${result.cacheEntriesDeleted} cache entries, ${result.blobRefsDeleted} blob references and ${blobsDeleted} blobs from ${storage.location}; ${result.liveDigests.size} blobs remain in use.\n`,
    );
  }
  return reportUnreadableManifests(result.unreadableManifests, storage.location, io);
}
