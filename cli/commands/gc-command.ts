import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readDatabaseSettings } from '../../app/control-plane-settings.js';
import { formatBytes } from '../../schemas/format.js';
import { DirManifest } from '../../schemas/out-record.js';
import { gcStore } from '../../store/gc-store.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { collectLocalStore } from '../../local/collect-local-store.js';
import { deleteUnreferencedBlobs } from '../../local/delete-unreferenced-blobs.js';
import { localStorePaths } from '../../local/local-store-paths.js';
import { locateProject } from '../../local/locate-project.js';
import { userCacheDir } from '../../local/user-cache-dir.js';
import { openServerDatabase } from '../server/server-database.js';
import { UsageError } from '../../present/terminal/usage-error.js';

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
 * or --server), else this project's `.fluksio/` — never creating either.
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
  const result = await collectLocalStore(project.stateDir, { keepDays, templateRoot: userCacheDir(io.env) });
  if (options.json) io.stdout.write(`${JSON.stringify({ store: 'local', ...result }, null, 2)}\n`);
  else {
    io.stdout.write(
      `Removed ${result.runsDeleted} runs, ${result.cacheEntriesDeleted} cache entries and ${result.blobsDeleted} blob files (${formatBytes(result.bytesFreed)}) from ${project.displayPath}'s store; ${result.runsKept} runs remain.\n`,
    );
  }
  return 0;
}

async function collectServer(keepDays: number, options: GcCommandOptions, io: CliIo): Promise<number> {
  const blobRoot = join(readDatabaseSettings(io.env).dataDir, 'blobs');
  const blobPath = (digest: string) => join(blobRoot, 'sha256', digest.slice(7, 9), digest.slice(7));
  const database = await openServerDatabase(io);
  let result;
  try {
    result = await gcStore({
      db: database.db,
      keepDays,
      readManifest: async (digest) => {
        const text = await readFile(blobPath(digest), 'utf8').catch(() => null);
        const parsed = text === null ? null : DirManifest.safeParse(JSON.parse(text));
        return parsed?.success ? parsed.data.files.map((file) => file.digest) : null;
      },
    });
  } finally {
    await database.close();
  }
  const { blobsDeleted } = await deleteUnreferencedBlobs(
    blobRoot,
    result.liveDigests,
    Date.now() - keepDays * 86_400_000,
  );
  const summary = { ...result, liveDigests: result.liveDigests.size, blobsDeleted };
  if (options.json) io.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    io.stdout.write(
      `Removed ${result.runsDeleted} runs, ${result.cacheEntriesDeleted} cache entries, ${result.blobRefsDeleted} blob references and ${blobsDeleted} blob files; ${result.liveDigests.size} blobs remain in use.\n`,
    );
  }
  return 0;
}
