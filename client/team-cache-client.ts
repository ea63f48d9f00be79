import type { Readable } from 'node:stream';
import type { BlobDigest } from '../schemas/blob-digest.js';
import type { CacheEntry } from '../schemas/cache-entry.js';
import { CacheCandidates } from '../schemas/protocol/cache-candidates.js';
import { TeamCacheHit } from '../schemas/protocol/team-cache-hit.js';
import { TeamCacheReach } from '../schemas/protocol/team-cache-reach.js';
import { ControlPlaneClient, type ControlPlaneClientOptions } from './control-plane-client.js';
import { ControlPlaneHttp, type CallOptions } from './control-plane-http.js';

export interface TeamCacheClientOptions extends ControlPlaneClientOptions {
  /** The repository whose team cache is read, as the control plane names it (`owner/name`). */
  repository: string;
}

/**
 * The team's cache on the control plane, read with an API token (`GET /api/v1/team-cache…`,
 * app/routes/team-cache-route.ts): only trusted entries of one repository, and the bytes
 * of their outs through the blob routes as `fluksio pull` reads them (a presigned URL when
 * the store hands them out). Read-only: there is nothing here that writes.
 */
export class TeamCacheClient {
  private readonly http: ControlPlaneHttp;
  private readonly blobs: ControlPlaneClient;
  readonly repository: string;

  constructor(options: TeamCacheClientOptions) {
    this.http = new ControlPlaneHttp(options);
    this.blobs = new ControlPlaneClient(options);
    this.repository = options.repository;
  }

  /** The control plane's origin, for messages. */
  get origin(): string {
    return this.http.base.origin;
  }

  /** Whether the token may read the repository's team cache (it throws when not), and how many entries it holds. */
  async reach(call: CallOptions = {}): Promise<TeamCacheReach> {
    const path = `/api/v1/team-cache?${this.query()}`;
    return this.http.parse(await this.http.send('GET', path, { call }), TeamCacheReach, `GET ${path}`);
  }

  /** The trusted entry of `key` and its stage's series, or null. */
  async entry(key: string, call: CallOptions = {}): Promise<TeamCacheHit | null> {
    const path = `/api/v1/team-cache/${encodeURIComponent(key)}?${this.query()}`;
    const response = await this.http.send('GET', path, { call, allowNotFound: true });
    return response.status === 404 ? null : this.http.parse(response, TeamCacheHit, `GET ${path}`);
  }

  /** The trusted entries of a traced stage's manifest key, newest first and bounded. */
  async candidates(manifestKey: string, call: CallOptions = {}): Promise<CacheEntry[]> {
    const path = `/api/v1/team-cache/candidates/${encodeURIComponent(manifestKey)}?${this.query()}`;
    const response = await this.http.send('GET', path, { call });
    return (await this.http.parse(response, CacheCandidates, `GET ${path}`)).entries;
  }

  /** Whether the control plane has a blob of the entry's run that the token may read. */
  async hasBlob(runId: string, digest: BlobDigest, call: CallOptions = {}): Promise<boolean> {
    const path = `/api/v1/blobs/${digest}?run=${encodeURIComponent(runId)}`;
    const response = await this.http.send('HEAD', path, { call, allowNotFound: true });
    return response.status !== 404;
  }

  /** Downloads an out's blob of the entry's run into `consume` (NotFoundError when it may not be read). */
  blob<T>(
    runId: string,
    digest: BlobDigest,
    consume: (body: Readable) => Promise<T>,
    call: CallOptions = {},
  ): Promise<T> {
    return this.blobs.pullBlob(runId, digest, consume, call);
  }

  private query(): string {
    return new URLSearchParams({ repository: this.repository }).toString();
  }
}
