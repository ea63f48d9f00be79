import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { digestOf } from '../../core/canonical-json.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startRunner, type RunnerProcess } from './helpers/runner-process.js';

let database: TestDatabase;
let plane: TestControlPlane;
let repo: TestRepo;
let repository: string;
let submitter: string;
let runnerToken: string;
let workDir: string;
let runner: RunnerProcess | null = null;

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1, min: 0 }
  pidfile: { type: string, default: "" }
  seconds: { type: int, default: 0 }
stages:
  train:
    cmd: echo $$ > \${pidfile}.pid && sleep \${seconds} && echo "::metric name=loss::0.25" && echo \${lr} > model.txt
    params: [lr, pidfile, seconds]
    outs: [model.txt]
`;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({
    db: database.db,
    env: { FLUKSIO_HEARTBEAT_INTERVAL: '500ms', FLUKSIO_LEASE_TTL: '20s' },
  });
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n*.pid\n' } });
  repository = `local${repo.dir}`;
  submitter = await plane.addApiToken({ repositories: [repository] });
  ({ token: runnerToken } = await plane.addRunner({ name: 'box', owner: 'local' }));
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-'));
  runner = startRunner({ workDir }, { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: runnerToken });
});
afterEach(async () => {
  await runner?.stop('SIGKILL');
  await plane.close();
  await repo.cleanup();
  await rm(workDir, { recursive: true, force: true });
});

async function submit(params: Record<string, string | number>): Promise<string> {
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const { status, json } = await plane.submit(submitter, {
    repository,
    cloneUrl: `file://${repo.dir}`,
    commit,
    params,
  });
  expect(status, JSON.stringify(json)).toBe(201);
  return (json as { run: { id: string } }).run.id;
}

async function report(runId: string): Promise<RemoteRunReport> {
  const { json } = await plane.call('GET', `/api/v1/runs/${runId}`, { token: submitter });
  return json as unknown as RemoteRunReport;
}

async function waitForStatus(
  runId: string,
  statuses: string[],
  timeoutMs = 30_000,
): Promise<RemoteRunReport> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await report(runId);
    if (statuses.includes(current.run.status)) return current;
    if (Date.now() > deadline) {
      throw new Error(
        `run ${runId} is ${current.run.status} (${current.run.reason}), not ${statuses.join('/')}:\n${runner?.output()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The pid the stage wrote into its checkout (slot 0's only one), once it has. */
async function stagePid(pidfile: string): Promise<number> {
  const slot = path.join(workDir, 'checkouts', '0');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [checkout] = existsSync(slot) ? await readdir(slot) : [];
    const pidPath = checkout ? path.join(slot, checkout, `${pidfile}.pid`) : '';
    if (pidPath && existsSync(pidPath)) {
      const text = (await readFile(pidPath, 'utf8')).trim();
      if (text) return Number(text);
    }
    if (Date.now() > deadline) throw new Error(`the stage never started:\n${runner?.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a runner process against the control plane', () => {
  test('a submitted run is executed and finished with its metrics, showing the params that ran; the same run again is a cache hit', async () => {
    const first = await submit({ lr: 0.5, pidfile: 'a' });
    const done = await waitForStatus(first, ['succeeded', 'failed']);
    expect(done.run.status, done.run.reason ?? '').toBe('succeeded');
    // The default the submission left out ran too: the run says so, and its digest is of what ran.
    const ran = { lr: 0.5, pidfile: 'a', seconds: 0 };
    expect(done.run).toMatchObject({ params: ran, paramsDigest: digestOf(ran) });
    expect(done.metrics).toMatchObject({ loss: 0.25 });
    expect(done.stages).toMatchObject([{ name: 'train', status: 'ran' }]);
    expect(done.runner).toBe('box');

    const second = await submit({ lr: 0.5, pidfile: 'a' });
    const cached = await waitForStatus(second, ['succeeded', 'failed']);
    expect(cached.stages).toMatchObject([{ name: 'train', status: 'cached' }]);
  });

  test('a Python stage is restored by its read set: an unrelated commit hits, an edit to what it read re-runs', async () => {
    await repo.write(
      'fluksio.yml',
      'version: 1\nstages:\n  train:\n    cmd: python3 train.py\n    deps: [train.py]\n    outs: [model.txt]\n',
    );
    await repo.write('train.py', 'open("model.txt", "w").write(open("conf.json").read())\n');
    await repo.write('conf.json', '{"a": 1}\n');
    await repo.commitAll('a Python stage that reads conf.json');
    const first = await waitForStatus(await submit({}), ['succeeded', 'failed']);
    expect(first.stages).toMatchObject([{ name: 'train', status: 'ran' }]);

    await repo.write('README.md', 'docs\n');
    await repo.commitAll('docs');
    const docs = await waitForStatus(await submit({}), ['succeeded', 'failed']);
    expect(docs.stages).toMatchObject([{ name: 'train', status: 'cached', cachedFrom: first.run.id }]);

    await repo.write('conf.json', '{"a": 2}\n');
    await repo.commitAll('conf');
    const edited = await waitForStatus(await submit({}), ['succeeded', 'failed']);
    expect(edited.stages).toMatchObject([{ name: 'train', status: 'ran', reasons: ['conf.json changed'] }]);
  });

  test('a stage printing past its log_limit succeeds, its stored log is capped with a marker, and a later ::metric still arrives', async () => {
    await repo.write(
      'fluksio.yml',
      'version: 1\nstages:\n  train:\n    cmd: python3 train.py\n    deps: [train.py]\n    outs: [model.txt]\n    log_limit: 4KiB\n',
    );
    // Far more than a pipe holds: a runner that stopped reading would leave it blocked.
    await repo.write(
      'train.py',
      [
        'for i in range(10_000):',
        '    print(f"spam line {i}")',
        'print("::metric name=loss::0.25")',
        'open("model.txt", "w").write("done\\n")',
        '',
      ].join('\n'),
    );
    await repo.commitAll('a stage that prints without end');
    const done = await waitForStatus(await submit({}), ['succeeded', 'failed']);
    expect(done.run.status, done.run.reason ?? '').toBe('succeeded');
    expect(done.stages).toMatchObject([{ name: 'train', status: 'ran' }]);
    expect(done.metrics).toMatchObject({ loss: 0.25 });

    const { status, json } = await plane.call('GET', `/api/v1/runs/${done.run.id}/logs/train`, {
      token: submitter,
    });
    expect(status).toBe(200);
    const lines = json.lines as string[];
    const kept = lines.filter((line) => line.startsWith('spam line '));
    expect(kept[0]).toBe('spam line 0');
    expect(kept.reduce((sum, line) => sum + line.length + 1, 0)).toBeLessThanOrEqual(4096);
    expect(lines.slice(kept.length)).toEqual([
      expect.stringMatching(/^fluksio: this stage's log reached its limit of 4\.0 KiB \(log_limit\)/),
      expect.stringMatching(
        new RegExp(
          `^fluksio: dropped \\d+ bytes \\(${10_000 - kept.length} lines\\) of output past the log limit of 4\\.0 KiB$`,
        ),
      ),
    ]);
  });

  test('a cancel reaches the stage: its process is gone and the run is cancelled', async () => {
    const runId = await submit({ pidfile: 'slow', seconds: 60 });
    const pid = await stagePid('slow');
    const { status } = await plane.call('POST', `/api/v1/runs/${runId}/cancel`, {
      token: submitter,
      json: {},
    });
    expect(status).toBe(200);
    const cancelled = await waitForStatus(runId, ['cancelled'], 15_000);
    expect(cancelled.stages).toMatchObject([{ name: 'train', status: 'cancelled' }]);
    expect(isAlive(pid)).toBe(false);
  });

  test('SIGTERM on the runner cancels its stage and returns the run to the queue', async () => {
    const runId = await submit({ pidfile: 'slow', seconds: 60 });
    const pid = await stagePid('slow');
    expect(await runner?.stop('SIGTERM')).toBe(0);
    const queued = await waitForStatus(runId, ['queued'], 5_000);
    expect(queued.run.status).toBe('queued');
    expect(isAlive(pid)).toBe(false);
  });
});
