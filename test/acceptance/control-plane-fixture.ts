import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { hashToken } from '../../app/http/hash-token.js';
import { digestOf } from '../../core/canonical-json.js';
import type { ParamValue } from '../../schemas/key-inputs.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { createRun } from '../../store/runs/create-run.js';
import { createRunner } from '../../store/runners/create-runner.js';
import type { Database } from '../../store/db/database.js';
import { removeKeys, resetTables } from '../app/control-plane-harness.js';
import {
  startApp,
  startRunnerProcess,
  TEST_REDIS_URL,
  type AppProcess,
} from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

/**
 * One acceptance scenario's world: a real `fluksio app` process over a test database,
 * runner processes, repositories served as file:// URLs, and an API token for them.
 */
export class ControlPlaneWorld {
  app!: AppProcess;
  readonly runners: (FluksioProcess & { workDir: string })[] = [];
  readonly repos: TestRepo[] = [];
  readonly dirs: string[] = [];
  apiToken = '';
  readonly tokens: string[] = [];

  constructor(
    readonly db: Database,
    readonly databaseUrl: string,
  ) {}

  async start(env: Record<string, string> = {}): Promise<void> {
    await resetTables(this.db);
    this.app = await startApp({ databaseUrl: this.databaseUrl, env });
  }

  /** A committed repository; its name for the control plane is `local<path>`. */
  async repo(
    files: Record<string, string>,
  ): Promise<{ repo: TestRepo; repository: string; cloneUrl: string; commit: string }> {
    const repo = await makeRepo({ files });
    this.repos.push(repo);
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    return { repo, repository: `local${repo.dir}`, cloneUrl: `file://${repo.dir}`, commit };
  }

  /** An API token that may submit to these repositories. */
  async allow(repositories: string[]): Promise<string> {
    const token = `fxt_${randomBytes(32).toString('base64url')}`;
    await createApiToken({
      db: this.db,
      name: `t-${randomBytes(4).toString('hex')}`,
      repositories,
      scope: 'submit',
      tokenHash: hashToken(token),
    });
    this.apiToken = token;
    this.tokens.push(token);
    return token;
  }

  /** Registers a runner and starts its process. */
  async runner(
    name: string,
    options: {
      labels?: string[];
      repositories?: string[];
      args?: string[];
      env?: Record<string, string>;
      /** The control plane it talks to: another replica's URL. @defaultValue the world's app */
      url?: string;
    } = {},
  ): Promise<FluksioProcess & { workDir: string; token: string }> {
    const token = `fxr_${randomBytes(32).toString('base64url')}`;
    this.tokens.push(token);
    await createRunner({
      db: this.db,
      name,
      owner: 'local',
      labels: options.labels ?? [],
      repositories: options.repositories ?? [],
      tokenHash: hashToken(token),
    });
    const runner = await startRunnerProcess({
      url: options.url ?? this.app.url,
      token,
      args: options.args ?? [],
      env: options.env ?? {},
    });
    this.runners.push(runner);
    return Object.assign(runner, { token });
  }

  /** `POST /api/v1/runs`; resolves with the run id. */
  async submit(body: Record<string, unknown>, key = randomBytes(8).toString('hex')): Promise<string> {
    const response = await fetch(`${this.app.url}/api/v1/runs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.apiToken}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as RemoteRunReport & { error?: string };
    if (response.status >= 300) throw new Error(`submit answered ${response.status}: ${json.error}`);
    return json.run.id;
  }

  /**
   * Queues a fork pull request's run as the GitHub app does (trust domain `pr:7`, `fork`):
   * the API cannot, since it submits trusted runs only. Resolves with the run id.
   */
  async queueForkRun(
    project: { repository: string; cloneUrl: string; commit: string },
    params: Record<string, ParamValue>,
  ): Promise<string> {
    const id = ulid();
    await createRun({
      db: this.db,
      run: {
        id,
        repository: project.repository,
        pipelinePath: 'fluksio.yml',
        trustDomain: 'pr:7',
        fork: true,
        cloneUrl: project.cloneUrl,
        commit: project.commit,
        params,
        paramsDigest: digestOf(params),
        status: 'queued',
        labels: [],
      },
    });
    return id;
  }

  /** `GET /api/v1/runs/:id` with the API token. */
  async report(runId: string): Promise<RemoteRunReport> {
    const response = await fetch(`${this.app.url}/api/v1/runs/${runId}`, {
      headers: { authorization: `Bearer ${this.apiToken}` },
    });
    if (!response.ok) throw new Error(`GET run answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as RemoteRunReport;
  }

  /** Polls a run until `until` holds for its report (default: a final state). */
  async waitFor(
    runId: string,
    until: (report: RemoteRunReport) => boolean = (report) =>
      !['queued', 'running'].includes(report.run.status),
    timeoutMs = 90_000,
  ): Promise<RemoteRunReport> {
    const deadline = Date.now() + timeoutMs;
    let last: RemoteRunReport | null = null;
    while (Date.now() < deadline) {
      last = await this.report(runId);
      if (until(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(
      `Run ${runId} did not get there in ${timeoutMs} ms; last: ${JSON.stringify(last?.run)}\napp:\n${this.app.process.output().slice(-3000)}\nrunners:\n${this.runners.map((r) => r.output().slice(-3000)).join('\n---\n')}`,
    );
  }

  /** The run's row, straight from the database. */
  async row(runId: string): Promise<Run> {
    const [row] = await this.db.select().from(runs).where(eq(runs.id, runId));
    if (!row) throw new Error(`no run ${runId}`);
    return row;
  }

  /** A scratch directory removed at the end. */
  async scratch(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'fluksio-accept-'));
    this.dirs.push(dir);
    return dir;
  }

  async close(): Promise<void> {
    await Promise.all(this.runners.map((runner) => runner.stop('SIGKILL')));
    await this.app?.stop('SIGKILL');
    const redis = new Redis(TEST_REDIS_URL);
    await removeKeys(redis, this.app.env.FLUKSIO_QUEUE_PREFIX ?? 'none');
    await redis.quit();
    for (const runner of this.runners) await rm(runner.workDir, { recursive: true, force: true });
    await rm(this.app.dataDir, { recursive: true, force: true });
    for (const repo of this.repos) await repo.cleanup();
    for (const dir of this.dirs) await rm(dir, { recursive: true, force: true });
  }
}
