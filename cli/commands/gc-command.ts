import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readDatabaseSettings } from '../../app/control-plane-settings.js';
import { DirManifest } from '../../schemas/out-record.js';
import { gcStore } from '../../store/blobs/gc-store.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { openServerDatabase } from '../server/server-database.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/**
 * `fluksio gc [--keep-days N]`: forgets finished runs, cache entries and blob references
 * older than N days that nothing needs, then deletes the blob files no remaining record
 * names (and leftovers of interrupted uploads), all older than the same cut-off.
 */
export async function gcCommand(options: { keepDays: string; json?: boolean }, io: CliIo): Promise<number> {
  const keepDays = Number(options.keepDays);
  if (!Number.isInteger(keepDays) || keepDays < 0)
    throw new UsageError(`--keep-days: "${options.keepDays}" is not a whole number ≥ 0`);
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
  const cutoff = Date.now() - keepDays * 86_400_000;
  let blobsDeleted = 0;
  for (const folder of await readdir(join(blobRoot, 'sha256')).catch(() => [] as string[])) {
    for (const name of await readdir(join(blobRoot, 'sha256', folder))) {
      const path = join(blobRoot, 'sha256', folder, name);
      if (result.liveDigests.has(`sha256:${name}`)) continue;
      if ((await stat(path)).mtimeMs < cutoff) {
        await rm(path, { force: true });
        blobsDeleted += 1;
      }
    }
  }
  for (const name of await readdir(join(blobRoot, 'tmp')).catch(() => [] as string[])) {
    const path = join(blobRoot, 'tmp', name);
    if ((await stat(path)).mtimeMs < Date.now() - 86_400_000) await rm(path, { force: true });
  }
  const summary = { ...result, liveDigests: result.liveDigests.size, blobsDeleted };
  if (options.json) io.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    io.stdout.write(
      `Removed ${result.runsDeleted} runs, ${result.cacheEntriesDeleted} cache entries, ${result.blobRefsDeleted} blob references and ${blobsDeleted} blob files; ${result.liveDigests.size} blobs remain in use.\n`,
    );
  }
  return 0;
}
