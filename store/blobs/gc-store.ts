import { and, eq, lt, not, notInArray, sql } from 'drizzle-orm';
import type { OutRecord } from '../../schemas/out-record.js';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import { blobUploads } from '../../schemas/tables/blob-uploads.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import { runs } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { forgettableUploads } from './blob-deletion-guard.js';
import type { ManifestRead } from './manifest-files.js';

/** Blob refs per DELETE: they travel as one JSON parameter. */
const REFS_PER_DELETE = 5000;

/** What gcStore removed, and the blobs still in use. */
export interface GcResult {
  runsDeleted: number;
  cacheEntriesDeleted: number;
  blobRefsDeleted: number;
  /**
   * Every blob digest a remaining stage (outs, log) or cache entry (outs) names or a run
   * confirmed (see gcStore) — and,
   * when `readManifest` was given, the files of the directory manifests among them. Blob
   * files outside this set may be deleted by the caller, once older than the same cut-off:
   * a running stage's uploads are named by nothing until its finish event arrives.
   * Incomplete while `unreadableManifests` is not empty.
   */
  liveDigests: Set<string>;
  /**
   * The directory manifests a remaining stage or cache entry names that could not be read,
   * and why. Their files are named nowhere else, so the caller must then delete no blob
   * file at all (their repositories keep every blob ref), and say which manifest stopped it.
   */
  unreadableManifests: UnreadableManifest[];
}

/** A directory out's manifest gc could not read: which, whose, and why. */
export interface UnreadableManifest {
  digest: string;
  /** A repository whose stage or cache entry names it. */
  repository: string;
  reason: string;
}

/**
 * Forgets what is older than `keepDays` and no longer needed (`fluksio gc`): finished runs
 * (their stages, points, annotations, events and logs go with them) — except the newest
 * succeeded run of each repository's pipeline, so a quiet repository keeps a baseline —;
 * cache entries whose run is gone; and blob refs that no remaining stage or cache entry
 * names within their repository. Only rows older than the cut-off go, so a run uploading
 * blobs now keeps its refs, and a ref a run confirmed since the cut-off or a queued or
 * running run confirmed last, or that a queued or running run of its repository created before its
 * last confirmation may have confirmed, stays (blobRefs.confirmedAt). The files of a directory out are named only inside its
 * manifest blob, which the database cannot read: `readManifest` (the caller's blob store)
 * lists them. A manifest it cannot read (or, without it, every manifest) fails safe: its
 * repository keeps all its blob refs, and it is named in `unreadableManifests`, which tells
 * the caller to keep every blob file.
 *
 * It all reads one snapshot (a REPEATABLE READ transaction): read statement by statement,
 * a run that finished between the read of the stages (its outs not named yet) and that of
 * the confirmed refs (it no longer running) had its blobs collected under it. A run or ref
 * changed meanwhile that gc would delete fails the transaction, which is tried again.
 */
export async function gcStore(options: {
  db: Database;
  keepDays: number;
  readManifest?: (digest: string) => Promise<ManifestRead>;
}): Promise<GcResult> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await options.db.transaction((tx) => collect({ ...options, db: tx }), {
        isolationLevel: 'repeatable read',
      });
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isSerializationFailure(error)) throw error;
    }
  }
}

/** How many snapshots gcStore tries before giving up on a store written to without pause. */
const MAX_ATTEMPTS = 5;

async function collect({
  db,
  keepDays,
  readManifest,
}: {
  db: Database;
  keepDays: number;
  readManifest?: (digest: string) => Promise<ManifestRead>;
}): Promise<GcResult> {
  const cutoff = sql`now() - (${keepDays}::double precision * interval '1 day')`;
  const baselines = db
    .selectDistinctOn([runs.repository, runs.pipelinePath], { id: runs.id })
    .from(runs)
    .where(eq(runs.status, 'succeeded'))
    .orderBy(runs.repository, runs.pipelinePath, sql`${runs.createdAt} desc`, sql`${runs.id} desc`);
  const deletedRuns = await db
    .delete(runs)
    .where(
      and(
        notInArray(runs.status, ['queued', 'running']),
        lt(sql`coalesce(${runs.finishedAt}, ${runs.createdAt})`, cutoff),
        notInArray(runs.id, baselines),
      ),
    )
    .returning({ id: runs.id });
  const deletedEntries = await db
    .delete(cacheEntries)
    .where(
      and(
        lt(cacheEntries.createdAt, cutoff),
        sql`not exists (select from ${runs} where ${runs.id} = ${cacheEntries.runId})`,
      ),
    )
    .returning({ key: cacheEntries.key });

  const live = await liveBlobs(db, readManifest);
  // A run that was told a blob is stored skipped its upload and names the blob only when
  // its stage finishes: a ref confirmed since the cut-off, or by a run still unfinished,
  // stays, and so does its file. A confirmation arriving while gc runs is never lost: the
  // DELETE of a ref confirmed since the snapshot fails it (see gcStore), and gc reads again.
  //
  // The ref remembers only the run that confirmed it last; an earlier confirmer may still be
  // running after that one ended and was deleted. So a ref also stays while its repository
  // has a queued or running run created at or before its last confirmation. Safe: a run
  // confirms only after it was created (its id comes from a committed claim, so the
  // confirmation's now() is later), and confirmedAt never moves back (confirmBlobRef,
  // addBlobRef), so every run that ever confirmed the ref was created at or before
  // confirmedAt; while any of them is unfinished, the ref is kept. A run created later never
  // confirmed it. Once every such run ends, only stages and cache entries keep it.
  const confirmed = sql`(${blobRefs.confirmedAt} >= ${cutoff}
    or ${blobRefs.confirmedBy} in (select ${runs.id} from ${runs} where ${runs.status} in ('queued', 'running'))
    or exists (select from ${runs} where ${runs.repository} = ${blobRefs.repository}
      and ${runs.status} in ('queued', 'running') and ${runs.createdAt} <= ${blobRefs.confirmedAt}))`;
  const collectable = and(lt(blobRefs.createdAt, cutoff), not(confirmed));
  for (const { digest } of await db
    .selectDistinct({ digest: blobRefs.digest })
    .from(blobRefs)
    .where(confirmed)) {
    live.digests.add(digest);
  }
  const oldRefs = await db
    .select({ repository: blobRefs.repository, digest: blobRefs.digest })
    .from(blobRefs)
    .where(collectable);
  const unused = oldRefs.filter(
    (ref) => !live.unreadable.has(ref.repository) && !live.pairs.has(pairKey(ref.repository, ref.digest)),
  );
  // Upload records only matter while gc may be deleting the blob they protect.
  await db.delete(blobUploads).where(forgettableUploads(cutoff));
  let blobRefsDeleted = 0;
  for (let start = 0; start < unused.length; start += REFS_PER_DELETE) {
    const chunk = unused.slice(start, start + REFS_PER_DELETE);
    const deleted = await db
      .delete(blobRefs)
      .where(
        and(
          collectable,
          sql`(${blobRefs.repository}, ${blobRefs.digest}) in (select r.repository, r.digest
            from jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb) as r(repository text, digest text))`,
        ),
      )
      .returning({ digest: blobRefs.digest });
    blobRefsDeleted += deleted.length;
  }
  return {
    runsDeleted: deletedRuns.length,
    cacheEntriesDeleted: deletedEntries.length,
    blobRefsDeleted,
    liveDigests: live.digests,
    unreadableManifests: [...live.unreadableManifests.values()],
  };
}

interface LiveBlobs {
  /** `repository\0digest` of every blob a remaining stage or cache entry of that repository names. */
  pairs: Set<string>;
  digests: Set<string>;
  /** Repositories with directory outs whose files could not be listed. */
  unreadable: Set<string>;
  /** The manifests that could not be read, by digest. */
  unreadableManifests: Map<string, UnreadableManifest>;
}

async function liveBlobs(
  db: Database,
  readManifest: ((digest: string) => Promise<ManifestRead>) | undefined,
): Promise<LiveBlobs> {
  const [stageRows, entryRows] = await Promise.all([
    db
      .select({ repository: runs.repository, outs: stages.outs, logDigest: stages.logDigest })
      .from(stages)
      .innerJoin(runs, eq(runs.id, stages.runId)),
    db.select({ repository: cacheEntries.repository, outs: cacheEntries.outs }).from(cacheEntries),
  ]);
  const named: { repository: string; digest: string; kind: OutRecord['kind'] }[] = [];
  for (const { repository, outs, logDigest } of stageRows) {
    for (const { digest, kind } of outs) named.push({ repository, digest, kind });
    if (logDigest) named.push({ repository, digest: logDigest, kind: 'file' });
  }
  for (const { repository, outs } of entryRows) {
    for (const { digest, kind } of outs) named.push({ repository, digest, kind });
  }
  const live: LiveBlobs = {
    pairs: new Set(),
    digests: new Set(),
    unreadable: new Set(),
    unreadableManifests: new Map(),
  };
  const manifests = new Map<string, Promise<ManifestRead>>();
  const read = readManifest ?? (async () => ({ unreadable: 'gc was given no way to read manifests' }));
  for (const { repository, digest, kind } of named) {
    live.pairs.add(pairKey(repository, digest));
    live.digests.add(digest);
    if (kind !== 'dir') continue;
    let manifest = manifests.get(digest);
    if (!manifest) manifests.set(digest, (manifest = read(digest)));
    const result = await manifest;
    // A manifest gone, damaged or too large names no file gc can see, yet its files may be
    // stored and wanted (a store answering badly for a moment, a manifest mended later):
    // nothing of it is collected.
    if ('unreadable' in result) {
      live.unreadable.add(repository);
      if (!live.unreadableManifests.has(digest))
        live.unreadableManifests.set(digest, { digest, repository, reason: result.unreadable });
      continue;
    }
    for (const file of result.files) {
      live.pairs.add(pairKey(repository, file));
      live.digests.add(file);
    }
  }
  return live;
}

/** A concurrent write to a row the snapshot would delete (40001), or a deadlock (40P01). */
function isSerializationFailure(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as Error & { code?: string }).code;
    if (code === '40001' || code === '40P01') return true;
  }
  return false;
}

function pairKey(repository: string, digest: string): string {
  return `${repository}\0${digest}`;
}
