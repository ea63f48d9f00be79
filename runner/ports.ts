import type { BlobDigest } from '../schemas/blob-digest.js';
import type { CacheEntry } from '../schemas/cache-entry.js';
import type { PreviousStage } from '../schemas/previous-stage.js';
import type { RunEventBody } from '../schemas/run-event.js';

/**
 * The stage cache as the engine sees it, already scoped to one repository and the
 * trust domains this run may read (DESIGN §5). Locally it is the embedded store; on a
 * runner, the control plane's cache API. A cache that cannot answer must resolve to
 * null (a miss), never reject: implementations catch their own failures.
 */
export interface StageCache {
  /** The entry for this key, or null. */
  lookup(key: string): Promise<CacheEntry | null>;
  /**
   * The stage as the run this one is compared with executed or restored it — locally the
   * previous run of the pipeline that reached this stage, on a runner the previous run of
   * the pipeline the control plane holds — to say why the stage re-ran. Null when none.
   */
  previous(stage: string): Promise<PreviousStage | null>;
  /**
   * The entries of a traced stage's manifest key (core/manifest-key.ts), newest first
   * and bounded: the engine restores the first whose read set still holds. Empty when
   * there are none or the cache cannot answer.
   */
  candidates(manifestKey: string): Promise<CacheEntry[]>;
}

/** Size and digest of bytes stored in a blob store. */
export interface StoredBlob {
  digest: BlobDigest;
  size: number;
}

/**
 * Content-addressed bytes (DESIGN §1). Every read is verified against its digest;
 * a blob that is absent raises BlobMissingError and one whose bytes do not match
 * raises BlobCorruptError (and is dropped, so that storing it again repairs it).
 */
export interface BlobStore {
  has(digest: BlobDigest): Promise<boolean>;
  /** Stores a file's bytes; returns their digest. */
  putFile(path: string): Promise<StoredBlob>;
  putBytes(bytes: Uint8Array): Promise<StoredBlob>;
  /**
   * Writes the verified bytes to `dest` atomically (a temporary file, then rename).
   * `size`, when known (an out's record), is how many bytes there are: a store that
   * downloads stops past it.
   */
  getToFile(digest: BlobDigest, dest: string, size?: number): Promise<void>;
  getBytes(digest: BlobDigest): Promise<Buffer>;
}

/**
 * Where run events go. `emit` never blocks the engine; `flush` resolves when every
 * event emitted so far has been applied (locally) or acknowledged (remotely).
 */
export interface EventSink {
  emit(event: RunEventBody): void;
  flush(): Promise<void>;
}

/**
 * Lets the runs one process executes at once (a local sweep's members) share a stage
 * whose cache key they compute alike: work under one key is done one at a time, so the
 * first executes the stage and records its entry while the others wait, then hit the
 * cache instead of executing it again.
 */
export interface StageGate {
  /** Runs `work` once no other work under `key` is running; resolves with its result. */
  exclusive<T>(key: string, work: () => Promise<T>): Promise<T>;
}
