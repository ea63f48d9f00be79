import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { removeKeys } from '../app/control-plane-harness.js';
import { startApp, TEST_REDIS_URL } from '../helpers/control-plane-processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/** A one-stage pipeline: writes its params to an out; `cmd` can be replaced. */
function pipeline(cmd = 'echo ok > out.txt', params = ''): Record<string, string> {
  return {
    'fluksio.yml': `version: 1
params:
  note: { type: string, default: "" }
  seconds: { type: int, default: 0 }
  marker: { type: string, default: /dev/null }
${params}stages:
  work:
    cmd: ${cmd}
    params: [note, seconds, marker]
    outs: [out.txt]
`,
    '.gitignore': 'out.txt\n',
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until a stage wrote its process group id to `pidFile`, and returns it. */
async function stageStarted(pidFile: string): Promise<number> {
  let text = '';
  await until(async () => (text = (await readFile(pidFile, 'utf8').catch(() => '')).trim()) !== '');
  return Number(text);
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('dispatch by label', () => {
  test('gpu runs go to the gpu runner, cpu runs to either, a tpu run waits until a tpu runner appears; no runner takes an unbound repository', async () => {
    await world.start();
    const project = await world.repo(pipeline('echo "$FLUKSIO_RUN_ID" > out.txt'));
    await world.allow([project.repository]);
    await world.runner('cpu-box', { labels: ['cpu'] });
    await world.runner('gpu-box', { labels: ['cpu', 'gpu'] });
    // Could take gpu and tpu runs, but is bound to another repository.
    await world.runner('elsewhere', {
      labels: ['cpu', 'gpu', 'tpu'],
      repositories: ['local/some/other/repo'],
    });
    const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };

    const gpuRuns = await Promise.all(
      [1, 2, 3].map((i) => world.submit({ ...base, labels: ['gpu'], params: { note: `g${i}` } })),
    );
    const cpuRuns = await Promise.all(
      [1, 2, 3, 4].map((i) => world.submit({ ...base, labels: ['cpu'], params: { note: `c${i}` } })),
    );
    for (const id of gpuRuns) {
      const report = await world.waitFor(id);
      expect(report.run.status).toBe('succeeded');
      expect(report.runner).toBe('gpu-box');
    }
    for (const id of cpuRuns) {
      const report = await world.waitFor(id);
      expect(report.run.status).toBe('succeeded');
      expect(['cpu-box', 'gpu-box']).toContain(report.runner);
    }

    const tpuRun = await world.submit({ ...base, labels: ['tpu'] });
    const waiting = await world.waitFor(
      tpuRun,
      (report) => report.run.reason === 'Waiting for a runner labelled tpu',
      20_000,
    );
    expect(waiting.run.status).toBe('queued');
    await world.runner('tpu-box', { labels: ['tpu'] });
    const done = await world.waitFor(tpuRun);
    expect(done.run.status).toBe('succeeded');
    expect(done.runner).toBe('tpu-box');
  });
});

describe('nothing lost', () => {
  test('a runner killed mid-stage: its run is abandoned naming it, and its late writes are refused with 409', async () => {
    await world.start();
    const scratch = await world.scratch();
    const pidFile = join(scratch, 'stage.pid');
    const project = await world.repo(
      pipeline('echo $$ > ${marker} && sleep ${seconds} && echo ok > out.txt'),
    );
    await world.allow([project.repository]);
    const runner = await world.runner('doomed');
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { seconds: 60, marker: pidFile },
    });
    await stageStarted(pidFile);
    const { leaseId } = await world.row(runId);
    runner.child.kill('SIGKILL');
    await runner.exited;

    const report = await world.waitFor(runId, undefined, 30_000);
    expect(report.run.status).toBe('abandoned');
    expect(report.run.reason).toMatch(/doomed/);
    for (const [path, body] of [
      ['heartbeat', { lease: leaseId }],
      ['finish', { lease: leaseId, status: 'succeeded', reason: null, metrics: {} }],
    ] as const) {
      const response = await fetch(`${world.app.url}/api/v1/runs/${runId}/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(409);
    }
    expect((await world.report(runId)).run.status).toBe('abandoned');
    process.kill(-(await stageStarted(pidFile)), 'SIGKILL');
  });

  test('under retries, a killed runner’s run is queued again as attempt 2 and finished by another runner', async () => {
    await world.start();
    const scratch = await world.scratch();
    const pidFile = join(scratch, 'stage.pid');
    const project = await world.repo(
      pipeline('echo $$ > ${marker} && sleep ${seconds} && echo ok > out.txt'),
    );
    await world.allow([project.repository]);
    const runner = await world.runner('first');
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      retries: 1,
      params: { seconds: 3, marker: pidFile },
    });
    await stageStarted(pidFile);
    runner.child.kill('SIGKILL');
    const requeued = await world.waitFor(runId, (report) => report.run.status === 'queued', 30_000);
    expect(requeued.attempt).toBe(2);
    expect(requeued.run.reason).toMatch(/first/);
    await world.runner('second');
    const done = await world.waitFor(runId);
    expect(done).toMatchObject({ attempt: 2, runner: 'second', run: { status: 'succeeded' } });
  });

  test('the control plane killed and restarted while a run streams metrics: every point and log line is stored once', async () => {
    await world.start({ FLUKSIO_LEASE_TTL: '20s' });
    const stream =
      'for i in $(seq 0 59); do echo "::metric name=loss::$i"; echo "line $i"; sleep 0.08; done; echo ok > out.txt';
    const project = await world.repo(pipeline(stream));
    await world.allow([project.repository]);
    await world.runner('steady');
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
    });
    await world.waitFor(runId, (report) => report.run.status === 'running', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const port = Number(new URL(world.app.url).port);
    const { env, dataDir } = world.app;
    await world.app.stop('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    world.app = await startApp({
      databaseUrl: database.url,
      env,
      port,
      prefix: env.FLUKSIO_QUEUE_PREFIX,
      dataDir,
    });

    const report = await world.waitFor(runId);
    expect(report.run.status, `${report.run.reason}\n${world.runners[0]?.output().slice(-4000)}`).toBe(
      'succeeded',
    );
    expect(report.metrics.loss).toBe(59);
    const series = (await (
      await fetch(`${world.app.url}/api/v1/runs/${runId}/metrics`, {
        headers: { authorization: `Bearer ${world.apiToken}` },
      })
    ).json()) as { series: Record<string, { points: { step: number; value: number }[] }> };
    expect(series.series.loss?.points.map((point) => point.value)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    const logs = (await (
      await fetch(`${world.app.url}/api/v1/runs/${runId}/logs/work`, {
        headers: { authorization: `Bearer ${world.apiToken}` },
      })
    ).json()) as { lines: string[] };
    expect(logs.lines.filter((line) => line.startsWith('line '))).toEqual(
      Array.from({ length: 60 }, (_, i) => `line ${i}`),
    );
  });

  test('Redis flushed while runs are queued: every queued run still runs, once', async () => {
    await world.start();
    const scratch = await world.scratch();
    const counter = join(scratch, 'executions.txt');
    const project = await world.repo(pipeline('echo "$FLUKSIO_RUN_ID" >> ${marker} && echo ok > out.txt'));
    await world.allow([project.repository]);
    const ids = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        world.submit({
          repository: project.repository,
          cloneUrl: project.cloneUrl,
          commit: project.commit,
          params: { note: `n${i}`, marker: counter },
        }),
      ),
    );
    const redis = new Redis(TEST_REDIS_URL);
    await removeKeys(redis, world.app.env.FLUKSIO_QUEUE_PREFIX ?? '');
    await redis.quit();
    await world.runner('after-flush');
    for (const id of ids) expect((await world.waitFor(id)).run.status).toBe('succeeded');
    const executions = (await readFile(counter, 'utf8')).trim().split('\n').sort();
    expect(executions).toEqual([...ids].sort());
  });
});

describe('the stage cache across runners', () => {
  test('a hit on another runner for the same repository; a miss for another repository and for a fork PR’s entry seen from a trusted run', async () => {
    await world.start();
    const files = pipeline('echo "$FLUKSIO_RUN_ID ${note}" > out.txt');
    const first = await world.repo(files);
    const other = await world.repo(files);
    await world.allow([first.repository, other.repository]);
    await world.runner('alpha', { labels: ['a'] });
    await world.runner('beta', { labels: ['b'], args: ['--accept-forks'] });
    const on = (project: typeof first, labels: string[], params: Record<string, string> = {}) =>
      world.submit({
        repository: project.repository,
        cloneUrl: project.cloneUrl,
        commit: project.commit,
        labels,
        params,
      });

    const original = await world.waitFor(await on(first, ['a']));
    expect(original.stages[0]?.status).toBe('ran');
    const again = await world.waitFor(await on(first, ['b']));
    expect(again.runner).toBe('beta');
    expect(again.stages[0]).toMatchObject({ status: 'cached', cachedFrom: original.run.id });

    const elsewhere = await world.waitFor(await on(other, ['b']));
    expect(elsewhere.stages[0]?.status).toBe('ran');

    // A fork's pull request (as the GitHub app queues it): trust domain pr:7.
    const { createRun } = await import('../../store/runs/create-run.js');
    const { digestOf } = await import('../../core/canonical-json.js');
    const params = { note: 'from-fork', seconds: 0, marker: '/dev/null' };
    const { ulid } = await import('ulid');
    const forkRunId = ulid();
    await createRun({
      db: world.db,
      run: {
        id: forkRunId,
        repository: first.repository,
        pipelinePath: 'fluksio.yml',
        trustDomain: 'pr:7',
        fork: true,
        cloneUrl: first.cloneUrl,
        commit: first.commit,
        params,
        paramsDigest: digestOf(params),
        status: 'queued',
        labels: ['b'],
      },
    });
    const forkRun = await world.waitFor(forkRunId);
    expect(forkRun.stages[0]?.status).toBe('ran');

    const trusted = await world.waitFor(await on(first, ['a'], { note: 'from-fork' }));
    expect(trusted.stages[0]).toMatchObject({ status: 'ran', cachedFrom: null });
  });
});

describe('cancel and stop', () => {
  test('cancel reaches the stage within a heartbeat, its process group is gone, the run ends cancelled', async () => {
    await world.start();
    const scratch = await world.scratch();
    const pidFile = join(scratch, 'stage.pid');
    const project = await world.repo(
      pipeline('echo $$ > ${marker} && (sleep 120 &) && sleep ${seconds} && echo ok > out.txt'),
    );
    await world.allow([project.repository]);
    await world.runner('worker');
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { seconds: 120, marker: pidFile },
    });
    const group = await stageStarted(pidFile);
    const response = await fetch(`${world.app.url}/api/v1/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.apiToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(200);
    const report = await world.waitFor(runId, undefined, 20_000);
    expect(report.run.status).toBe('cancelled');
    expect(report.stages[0]?.status).toBe('cancelled');
    await until(() => !isAlive(-group), 10_000);
  });

  test('SIGTERM to a runner cancels its stage and returns the run to the queue', async () => {
    await world.start();
    const scratch = await world.scratch();
    const pidFile = join(scratch, 'stage.pid');
    const project = await world.repo(
      pipeline('echo $$ > ${marker} && sleep ${seconds} && echo ok > out.txt'),
    );
    await world.allow([project.repository]);
    const runner = await world.runner('leaving');
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { seconds: 120, marker: pidFile },
    });
    const group = await stageStarted(pidFile);
    expect(await runner.stop('SIGTERM')).toBe(0);
    const report = await world.waitFor(runId, (r) => r.run.status === 'queued', 20_000);
    expect(report.run.status).toBe('queued');
    await until(() => !isAlive(-group), 10_000);
  });
});

describe('secrets', () => {
  test('no token appears in any log, process argument list or stage environment', async () => {
    await world.start();
    const scratch = await world.scratch();
    const envFile = join(scratch, 'secrets.env');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(envFile, 'WANDB_API_KEY=wandb-secret-value-123\n');
    const project = await world.repo(
      pipeline('env && ps -eo args && echo "key=$WANDB_API_KEY" && echo ok > out.txt'),
    );
    await world.allow([project.repository]);
    const runner = await world.runner('careful', { args: ['--env-file', envFile] });
    const runId = await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
    });
    expect((await world.waitFor(runId)).run.status).toBe('succeeded');
    const logs = (await (
      await fetch(`${world.app.url}/api/v1/runs/${runId}/logs/work`, {
        headers: { authorization: `Bearer ${world.apiToken}` },
      })
    ).json()) as { lines: string[] };
    const text = logs.lines.join('\n');
    expect(text).toContain('key=***');
    expect(text).toMatch(/PATH=/);
    const { readFile: read } = await import('node:fs/promises');
    const runnerArgs = (await read(`/proc/${runner.child.pid}/cmdline`, 'utf8')).split('\0').join(' ');
    for (const secret of [...world.tokens, 'wandb-secret-value-123']) {
      expect(text).not.toContain(secret);
      expect(world.app.process.output()).not.toContain(secret);
      expect(runner.output()).not.toContain(secret);
      expect(runnerArgs).not.toContain(secret);
    }
  });
});
