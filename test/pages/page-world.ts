import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { RunEventBody } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { PageLinkSigner } from '../../app/pages/page-link-signer.js';
import {
  freePort,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from '../app/control-plane-harness.js';
import { startGitHubDouble, type GitHubDouble } from '../github/github-double.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

/** The pages secret the test control planes are started with, so tests can sign links. */
export const PAGES_SECRET = 'p'.repeat(48);
export const pageLinks = new PageLinkSigner(Buffer.from(PAGES_SECRET), 3_600_000);

const DIGEST = 'd'.repeat(64);

/** What a page test works with: a control plane with the pages secret, its tokens, and a browser tab. */
export interface PageTestWorld {
  database: TestDatabase;
  browser: TestBrowser;
  plane: TestControlPlane;
  /** An API token for acme/model. */
  submitter: string;
  runnerToken: string;
  page: Page;
  /** With `signIn`: the GitHub double whose OAuth client the control plane signs users in with. */
  double: GitHubDouble;
}

/**
 * Registers the hooks a page test file needs and returns its world, filled before each
 * test: one database and one Chromium per file; per test, fresh tables, a control plane
 * started with PAGES_SECRET, a submitter and a runner of acme, and a new tab. With
 * `signIn`, a GitHub double per test holds the private repository acme/model, and the
 * control plane is its App with an OAuth client, at a public URL known before it starts.
 */
export function usePageWorld({
  signIn = false,
  env = {},
}: {
  signIn?: boolean;
  /** More settings for the control plane (FLUKSIO_CLONE_HOSTS, …). */
  env?: Record<string, string>;
} = {}): PageTestWorld {
  const world = {} as PageTestWorld;
  beforeAll(async () => {
    [world.database, world.browser] = await Promise.all([createTestDatabase(), launchChromium()]);
  });
  afterAll(async () => {
    await world.browser?.close();
    await world.database?.close();
  });
  beforeEach(async () => {
    await resetTables(world.database.db);
    let github: Record<string, string> = {};
    let port = 0;
    if (signIn) {
      world.double = await startGitHubDouble();
      world.double.addRepository({ owner: 'acme', name: 'model', private: true });
      port = await freePort();
      github = {
        APP_ID: String(world.double.credentials.appId),
        PRIVATE_KEY: world.double.credentials.privateKey,
        WEBHOOK_SECRET: 'unused-webhook-secret',
        FLUKSIO_ALLOWED_OWNERS: 'acme',
        GITHUB_API_URL: world.double.url,
        GITHUB_CLIENT_ID: world.double.oauth.clientId,
        GITHUB_CLIENT_SECRET: world.double.oauth.clientSecret,
        FLUKSIO_PUBLIC_URL: `http://127.0.0.1:${port}`,
      };
    }
    world.plane = await startTestControlPlane({
      db: world.database.db,
      env: { FLUKSIO_PAGES_SECRET: PAGES_SECRET, ...github, ...env },
      port,
    });
    world.submitter = await world.plane.addApiToken({ repositories: ['acme/model'] });
    world.runnerToken = (await world.plane.addRunner({ name: `r-${Date.now()}`, owner: 'acme' })).token;
    world.page = await world.browser.newPage();
  });
  afterEach(async () => {
    await world.page.context().close();
    await world.plane.close();
    if (signIn) {
      expect(world.double.violations).toEqual([]);
      await world.double.close();
    }
  });
  return world;
}

/**
 * A run on a test control plane driven as a runner drives it, over the runner protocol:
 * submitted, claimed, started, then fed events and finished by the test.
 */
export class DrivenRun {
  private seq = 0;
  private constructor(
    private readonly plane: TestControlPlane,
    private readonly runnerToken: string,
    readonly claim: Claim,
  ) {}

  static async start(
    plane: TestControlPlane,
    {
      submitter,
      runnerToken,
      params = {},
      group,
      origin,
    }: {
      submitter: string;
      runnerToken: string;
      params?: Record<string, string | number>;
      group?: { id: string; index: number };
      /** A repository other than acme/model, and where it is fetched from. */
      origin?: { repository: string; cloneUrl: string };
    },
  ): Promise<DrivenRun> {
    const submitted = await plane.submit(submitter, {
      params,
      ...(group ? { group } : {}),
      ...(origin ?? {}),
    });
    expect(submitted.status).toBe(201);
    const claim = await plane.claim(runnerToken);
    if (!claim) throw new Error('nothing to claim');
    const run = new DrivenRun(plane, runnerToken, claim);
    await run.post('start', {
      lease: claim.lease,
      codeDigest: DIGEST,
      envDigest: DIGEST,
      ...ranAsClaimed(claim),
    });
    return run;
  }

  get id(): string {
    return this.claim.run.id;
  }

  /**
   * Stores `bytes` as this run's blob through the control plane (a directory store), as a
   * runner uploads an output before its stage's finish may name it; resolves with its digest.
   */
  async storeBlob(bytes: Buffer | string): Promise<`sha256:${string}`> {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}` as const;
    const answer = await this.plane.call('PUT', `/api/v1/blobs/${digest}`, {
      token: this.runnerToken,
      headers: { 'x-fluksio-lease': this.claim.lease, 'x-fluksio-run': this.id },
      body: Buffer.from(bytes),
    });
    if (answer.status >= 300) throw new Error(`storing a blob answered ${answer.status}: ${answer.text}`);
    return digest;
  }

  async events(...events: RunEventBody[]): Promise<void> {
    await this.post('events', {
      lease: this.claim.lease,
      attempt: 1,
      events: events.map((event) => ({ ...event, seq: this.seq++ })),
    });
  }

  async finish(
    status: 'succeeded' | 'failed',
    metrics: Record<string, number>,
    reason: string | null = null,
  ) {
    await this.post('finish', { lease: this.claim.lease, status, reason, metrics });
  }

  private async post(suffix: string, json: unknown): Promise<void> {
    const answer = await this.plane.call('POST', `/api/v1/runs/${this.id}/${suffix}`, {
      token: this.runnerToken,
      json,
    });
    if (answer.status >= 300) throw new Error(`${suffix} answered ${answer.status}: ${answer.text}`);
  }
}

/** A finished stage record as a runner reports it. */
export function finishedStage(name: string, overrides: Partial<StageRecord> = {}): StageRecord {
  return {
    name,
    status: 'ran',
    cacheKey: randomBytes(32).toString('hex'),
    keyInputs: null,
    cachedFrom: null,
    cachedFromTeam: false,
    reasons: ['first run'],
    notes: [],
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: 1234,
    exitCode: 0,
    outs: [],
    metrics: {},
    logTail: '',
    logDigest: null,
    error: null,
    dirtyReasons: [],
    warnings: [],
    usage: null,
    pending: null,
    ...overrides,
  };
}
