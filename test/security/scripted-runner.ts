import { createHash, randomBytes } from 'node:crypto';
import { hashToken } from '../../app/http/hash-token.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { createRunner } from '../../store/runners/create-runner.js';
import type { Database } from '../../store/db/database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

/**
 * The control plane's settings for a test whose ScriptedRunner holds a claim: it sends no
 * heartbeat, so its lease must outlast the test on a loaded machine (FAST_SETTINGS' 3 s does not).
 */
export const SCRIPTED_RUNNER_SETTINGS = { FLUKSIO_LEASE_TTL: '10m' };

/**
 * A runner driven by hand: speaks the runner protocol over HTTP one step at a time and
 * reports whatever the test chooses — an attacker holding a runner token, or a runner
 * paused at the exact moment a race needs.
 */
export class ScriptedRunner {
  private constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  static async register(db: Database, url: string, name = 'scripted'): Promise<ScriptedRunner> {
    const token = `fxr_${randomBytes(32).toString('base64url')}`;
    await createRunner({
      db,
      name,
      owner: 'local',
      labels: [],
      repositories: [],
      tokenHash: hashToken(token),
    });
    return new ScriptedRunner(url, token);
  }

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text };
  }

  async claim(): Promise<Claim> {
    const { status, text } = await this.call('POST', '/api/v1/runner/claim', { waitSeconds: 10 });
    if (status !== 200) throw new Error(`claim answered ${status}: ${text}`);
    return JSON.parse(text) as Claim;
  }

  /** Uploads bytes as a blob of the claimed run; resolves with the digest. */
  async putBlob(claim: Claim, bytes: string): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const response = await fetch(`${this.url}/api/v1/blobs/${digest}`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${this.token}`,
        'x-fluksio-lease': claim.lease,
        'x-fluksio-run': claim.run.id,
        'content-type': 'application/octet-stream',
      },
      body: bytes,
    });
    if (response.status >= 300)
      throw new Error(`PUT blob answered ${response.status}: ${await response.text()}`);
    return digest;
  }

  /**
   * Stores bytes as a blob of the claimed run the way a runner does on any store: asks for
   * an upload ticket, then PUTs through the control plane or to the presigned URL (and
   * finishes that upload). Resolves with the digest.
   */
  async storeBlob(claim: Claim, bytes: string): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const size = Buffer.byteLength(bytes);
    const lease = { 'x-fluksio-lease': claim.lease, 'x-fluksio-run': claim.run.id };
    const uploads = `/api/v1/blobs/${digest}/uploads`;
    const ticket = await this.call('POST', uploads, { size }, lease);
    if (ticket.status >= 300) throw new Error(`upload ticket answered ${ticket.status}: ${ticket.text}`);
    const answer = JSON.parse(ticket.text) as
      | { via: 'control-plane' }
      | { via: 'url'; url: string; headers: Record<string, string>; uploadId: string };
    if (answer.via === 'control-plane') return this.putBlob(claim, bytes);
    const put = await fetch(answer.url, { method: 'PUT', headers: answer.headers, body: bytes });
    if (put.status >= 300) throw new Error(`presigned PUT answered ${put.status}: ${await put.text()}`);
    const finish = await this.call('POST', `${uploads}/${answer.uploadId}`, { size }, lease);
    if (finish.status >= 300) throw new Error(`upload finish answered ${finish.status}: ${finish.text}`);
    return digest;
  }

  /** `HEAD` of a blob for the claimed run, as a runner asks before skipping an upload. */
  async head(claim: Claim, digest: string): Promise<number> {
    const response = await fetch(`${this.url}/api/v1/blobs/${digest}`, {
      method: 'HEAD',
      headers: {
        authorization: `Bearer ${this.token}`,
        'x-fluksio-lease': claim.lease,
        'x-fluksio-run': claim.run.id,
      },
    });
    return response.status;
  }

  async start(claim: Claim): Promise<void> {
    const digest = 'a'.repeat(64);
    const { status, text } = await this.call('POST', `/api/v1/runs/${claim.run.id}/start`, {
      lease: claim.lease,
      codeDigest: digest,
      envDigest: digest,
      ...ranAsClaimed(claim),
    });
    if (status !== 200) throw new Error(`start answered ${status}: ${text}`);
  }

  /** Reports a stage that "ran" and stored `outs`; resolves with the control plane's answer. */
  reportStage(claim: Claim, seq: number, name: string, outs: StageRecord['outs']) {
    const now = new Date().toISOString();
    const stage: StageRecord = {
      name,
      status: 'ran',
      cacheKey: null,
      keyInputs: null,
      cachedFrom: null,
      cachedFromTeam: false,
      reasons: [],
      startedAt: now,
      finishedAt: now,
      durationMs: 1,
      exitCode: 0,
      outs,
      metrics: {},
      logTail: '',
      logDigest: null,
      error: null,
      dirtyReasons: [],
      warnings: [],
      usage: null,
      pending: null,
      notes: [],
    };
    return this.call('POST', `/api/v1/runs/${claim.run.id}/events`, {
      lease: claim.lease,
      attempt: claim.run.attempt,
      events: [{ seq, type: 'stage.finished', stage }],
    });
  }

  finish(claim: Claim, status: 'succeeded' | 'failed' = 'succeeded') {
    return this.call('POST', `/api/v1/runs/${claim.run.id}/finish`, {
      lease: claim.lease,
      status,
      reason: null,
      metrics: {},
    });
  }
}
