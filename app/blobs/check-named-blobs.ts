import { formatPath } from '../../core/problem.js';
import { messageOf } from '../../core/text/message-of.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { DirManifest } from '../../schemas/out-record.js';
import type { RunEvent } from '../../schemas/run-event.js';
import { heldBlobSizes } from '../../store/blobs/held-blob-sizes.js';
import type { Database } from '../../store/db/database.js';
import { HttpError } from '../http/http-error.js';
import type { BlobStorage } from './blob-storage.js';

/**
 * The largest directory manifest a stage's finish may name: what a runner reads into
 * memory to restore a directory (its MAX_DOWNLOADED_BYTES), so a larger one could never
 * be restored anyway, and what the control plane holds in memory to check one.
 */
export const MAX_NAMED_MANIFEST_BYTES = 64 * 2 ** 20;

/** A blob a stage's finish names, where, and at which size when the record says. */
interface Named {
  digest: string;
  /** The input at fault, e.g. `events[0].stage.outs[1].digest`. */
  field: string;
  /** In words: `out model.bin of stage train`. */
  what: string;
  /** The size the record gives the blob itself (a file out, a manifest's file), else null. */
  size: number | null;
}

/**
 * Refuses (422, nothing of the batch applied) a batch whose `stage.finished` names a blob
 * `repository` does not hold (DESIGN §5, §6): every out and log a stage names must have
 * been stored by a run of that repository — uploaded and verified, or found stored by a
 * HEAD — at the size its record gives, and a directory out's manifest must read back as
 * one whose files the repository holds too. A digest is a name, not proof of possession:
 * without this a runner of any tenant could record another repository's digests (kept
 * alive against that repository's gc), plant cache entries whose hits restore nothing,
 * or name a "manifest" gc cannot read, which stops gc deleting any blob file at all.
 */
export async function checkNamedBlobs({
  db,
  blobs,
  repository,
  events,
}: {
  db: Database;
  blobs: BlobStorage;
  repository: string;
  events: readonly RunEvent[];
}): Promise<void> {
  const named: Named[] = [];
  const dirs: { out: Named; path: string; stage: string; size: number }[] = [];
  events.forEach((event, index) => {
    if (event.type !== 'stage.finished') return;
    const { stage } = event;
    stage.outs.forEach((out, position) => {
      const entry: Named = {
        digest: out.digest,
        field: `events[${index}].stage.outs[${position}].digest`,
        what: `out ${out.path} of stage ${stage.name}`,
        size: out.kind === 'file' ? out.size : null,
      };
      named.push(entry);
      if (out.kind === 'dir') dirs.push({ out: entry, path: out.path, stage: stage.name, size: out.size });
    });
    if (stage.logDigest !== null) {
      named.push({
        digest: stage.logDigest,
        field: `events[${index}].stage.logDigest`,
        what: `the log of stage ${stage.name}`,
        size: null,
      });
    }
  });
  if (named.length === 0) return;
  await requireHeld(db, repository, named);

  // One manifest in memory at a time: a batch may name many directories.
  for (const dir of dirs) {
    const manifest = await readManifest(blobs, dir.out.digest as BlobDigest);
    if (typeof manifest === 'string') throw refusal(dir.out, `its manifest cannot be read: ${manifest}`);
    const files = manifest.files.map((file): Named => ({
      digest: file.digest,
      field: dir.out.field,
      what: `file ${file.path} of out ${dir.path} of stage ${dir.stage}`,
      size: file.size,
    }));
    await requireHeld(db, repository, files);
    const total = manifest.files.reduce((sum, file) => sum + file.size, 0);
    if (total !== dir.size)
      throw refusal(
        dir.out,
        `its manifest's files add up to ${total} bytes, not the ${dir.size} the record says`,
      );
  }
}

/** Throws the refusal of the first of `named` that `repository` does not hold at its size. */
async function requireHeld(db: Database, repository: string, named: readonly Named[]): Promise<void> {
  const held = await heldBlobSizes({ db, repository, digests: named.map((entry) => entry.digest) });
  for (const entry of named) {
    const size = held.get(entry.digest);
    if (size === undefined)
      throw refusal(
        entry,
        `${repository} holds no such blob: a stage may name only blobs a run of its repository stored (uploaded, or found stored before skipping the upload)`,
      );
    if (entry.size !== null && entry.size !== size)
      throw refusal(entry, `it is stored at ${size} bytes, not the ${entry.size} the record says`);
  }
}

/** A directory out's manifest, or why it is not one. A store that fails rejects (500: retried). */
async function readManifest(blobs: BlobStorage, digest: BlobDigest): Promise<DirManifest | string> {
  const size = await blobs.size(digest);
  if (size === null) return `missing from ${blobs.location}`;
  if (size > MAX_NAMED_MANIFEST_BYTES)
    return `too large: ${size} bytes, more than the ${MAX_NAMED_MANIFEST_BYTES} a runner reads`;
  const bytes = await blobs.readSmall(digest, MAX_NAMED_MANIFEST_BYTES);
  if (bytes === null) return `missing from ${blobs.location}`;
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return `not JSON (${messageOf(error)})`;
  }
  const parsed = DirManifest.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue ? formatPath(issue.path) : '';
  return `not a directory manifest (${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'})`;
}

function refusal({ digest, field, what }: Named, problem: string): HttpError {
  return new HttpError(
    422,
    `${field}: ${digest} (${what}): ${problem}; nothing of this batch was applied`,
    field,
  );
}
