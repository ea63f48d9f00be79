import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { RunEvent } from '../../schemas/run-event.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { makeClaim } from './helpers/make-claim.js';
import { startRunner, type RunnerProcess } from './helpers/runner-process.js';

let plane: FakeControlPlane;
let repo: TestRepo;
let workDir: string;
let runner: RunnerProcess | null = null;
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-'));
});
afterEach(async () => {
  await runner?.stop('SIGKILL');
  runner = null;
  await plane.stop();
  await repo?.cleanup();
  await rm(workDir, { recursive: true, force: true });
});

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1, min: 0 }
env: [DEVICE]
stages:
  train:
    cmd: echo "training with lr=\${lr} on $DEVICE" && echo "::metric name=loss::0.25" && echo \${lr} > model.txt
    params: [lr]
    outs: [model.txt]
`;

function start(
  options: { acceptForks?: boolean; envFile?: string } = {},
  env: Record<string, string> = {},
): RunnerProcess {
  runner = startRunner(
    { workDir, ...options },
    { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token, DEVICE: 'cuda:0', ...env },
  );
  return runner;
}

const logLines = (events: RunEvent[]) =>
  events.flatMap((event) => (event.type === 'stage.log' ? event.lines : []));
const finished = (events: RunEvent[]) =>
  events.flatMap((event) => (event.type === 'stage.finished' ? [event.stage] : []));

describe('a runner executes what it claims', () => {
  test('a claimed run is checked out, started, executed and finished with its metrics; the next is served from the cache', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' } });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    start();
    const first = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, params: { lr: 0.5 } }));
    const done = await plane.waitFor(first.claim.run.id, (run) => run.finish !== null);
    expect(done.finish).toMatchObject({ status: 'succeeded', reason: null, metrics: { loss: 0.25 } });
    expect(done.started?.codeDigest).toMatch(/^[0-9a-f]{64}$/);
    const events = plane.eventsOf(first.claim.run.id);
    expect(logLines(events)).toContain('training with lr=0.5 on cuda:0');
    expect(finished(events)).toMatchObject([{ name: 'train', status: 'ran' }]);
    expect([...plane.blobs.values()].map(String)).toContain('0.5\n');
    expect(done.heartbeats).toBeGreaterThan(0);

    const second = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, params: { lr: 0.5 } }));
    await plane.waitFor(second.claim.run.id, (run) => run.finish !== null);
    expect(finished(plane.eventsOf(second.claim.run.id))).toMatchObject([
      { name: 'train', status: 'cached', cachedFrom: first.claim.run.id },
    ]);
    expect(runner?.output()).toContain(`"run":"${second.claim.run.id}"`);
  });

  test('a cache entry whose out has more bytes than its record says is a miss, whether the runner holds the blob or downloads it', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' } });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    // What a hostile or broken run in the same trust domain could record: model.txt is 4 bytes.
    const understateOuts = () => {
      for (const entry of plane.cache.values())
        plane.cache.set(entry.key, { ...entry, outs: entry.outs.map((out) => ({ ...out, size: 1 })) });
    };
    const runAgain = async () => {
      const queued = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, params: { lr: 0.5 } }));
      await plane.waitFor(queued.claim.run.id, (run) => run.finish !== null);
      expect(queued.finish).toMatchObject({ status: 'succeeded' });
      return finished(plane.eventsOf(queued.claim.run.id));
    };
    const downloads = () =>
      plane.requests.filter((request) => request.line.startsWith('GET /api/v1/blobs/')).length;
    const tooLarge = expect.stringMatching(
      /could not be restored \(blob sha256:[0-9a-f]{64} was larger than its record\)/,
    );
    start();
    await runAgain();

    // Its local cache holds model.txt's blob from the first run.
    understateOuts();
    expect(await runAgain()).toMatchObject([{ name: 'train', status: 'ran', reasons: [tooLarge] }]);
    expect(downloads()).toBe(0);

    // A runner without the blob downloads it, and stops past the record's size.
    await runner?.stop('SIGTERM');
    await rm(path.join(workDir, 'blobs'), { recursive: true, force: true });
    understateOuts();
    start();
    expect(await runAgain()).toMatchObject([{ name: 'train', status: 'ran', reasons: [tooLarge] }]);
    expect(downloads()).toBe(1);
  });

  test('a claimed dvc.yaml is translated as fluksio run translates it, and its stage reads the run’s value from params.yaml', async () => {
    repo = await makeRepo({
      files: {
        'params.yaml': 'train:\n  lr: 0.5\n',
        'dvc.yaml': [
          'stages:',
          '  train:',
          '    cmd: >-',
          "      sed -n 's/^ *lr: *//p' params.yaml > model.txt",
          '    params: [train.lr]',
          '    outs: [model.txt]',
          '',
        ].join('\n'),
        '.gitignore': 'model.txt\n',
      },
    });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    start();
    const queued = plane.enqueue(
      makeClaim({ repoDir: repo.dir, commit, pipelinePath: 'dvc.yaml', params: { 'train.lr': 0.25 } }),
    );
    const done = await plane.waitFor(queued.claim.run.id, (run) => run.finish !== null);
    expect(done.finish).toMatchObject({ status: 'succeeded', reason: null });
    expect(finished(plane.eventsOf(queued.claim.run.id))).toMatchObject([{ name: 'train', status: 'ran' }]);
    expect([...plane.blobs.values()].map(String)).toContain('0.25\n');
  });

  test('a broken pipeline or a param the commit does not declare fails the run with the problems, before it starts', async () => {
    repo = await makeRepo({
      files: { 'fluksio.yml': PIPELINE, 'broken.yml': 'version: 1\nstages:\n  x:\n    cmd: ""\n' },
    });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    start();
    const broken = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, pipelinePath: 'broken.yml' }));
    const badParams = plane.enqueue(
      makeClaim({ repoDir: repo.dir, commit, params: { lr: 'fast', epochs: 3 } }),
    );
    const wrongCommit = plane.enqueue(makeClaim({ repoDir: repo.dir, commit: '0'.repeat(40) }));
    for (const queued of [broken, badParams, wrongCommit]) {
      await plane.waitFor(queued.claim.run.id, (run) => run.finish !== null);
      expect(queued.started).toBeNull();
      expect(queued.finish?.status).toBe('failed');
    }
    expect(broken.finish?.reason).toMatch(
      /broken\.yml at commit [0-9a-f]{40} is not valid:\nbroken\.yml:4: stages\.x\.cmd: expected a command/,
    );
    expect(badParams.finish?.reason).toContain(
      `Parameter 'lr': "fast" is a string, but the pipeline declares it float`,
    );
    expect(badParams.finish?.reason).toContain(`Unknown parameter 'epochs'`);
    expect(wrongCommit.finish?.reason).toContain(`Could not fetch commit ${'0'.repeat(40)} of local/project`);
  });
});

describe('stopping', () => {
  const SLOW = `version: 1
stages:
  train:
    cmd: echo $$ > ${'${pidfile}'} && sleep 60
    params: [pidfile]
params:
  pidfile: { type: string }
`;

  async function slowRun({ heartbeatIntervalMs }: { heartbeatIntervalMs?: number } = {}) {
    repo = await makeRepo({ files: { 'fluksio.yml': SLOW } });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    const pidfile = path.join(workDir, 'stage.pid');
    const queued = plane.enqueue(
      makeClaim({
        repoDir: repo.dir,
        commit,
        params: { pidfile },
        ...(heartbeatIntervalMs ? { heartbeatIntervalMs } : {}),
      }),
    );
    // The shell creates the file before it writes the pid: wait for the pid itself.
    let text = '';
    await plane.waitFor(queued.claim.run.id, () => {
      text = existsSync(pidfile) ? readFileSync(pidfile, 'utf8').trim() : '';
      return text !== '';
    });
    return { queued, pid: Number(text) };
  }

  test('a cancel answered to the parked watch stops the stage before the next heartbeat, and the run finishes as the control plane said', async () => {
    start();
    // A minute between heartbeats: only the watch can bring the cancel within the wait below.
    const { queued, pid } = await slowRun({ heartbeatIntervalMs: 60_000 });
    queued.stopWith = { reason: 'The run exceeded its timeout of 1 min', finishAs: 'timed_out' };
    await plane.waitFor(queued.claim.run.id, (each) => each.finish !== null, 30_000);
    expect(queued.finish).toMatchObject({
      status: 'timed_out',
      reason: 'The run exceeded its timeout of 1 min',
    });
    expect(queued.watchesCancelled).toBe(1);
    expect(queued.heartbeats).toBe(1);
    expect(isAlive(pid)).toBe(false);
    expect(finished(plane.eventsOf(queued.claim.run.id))).toMatchObject([
      { name: 'train', status: 'cancelled' },
    ]);
    expect(runner?.output()).toMatch(/"via":"watch"[^\n]*"msg":"the control plane stopped the run"/);
  });

  test('a control plane without the watch (404) still stops the run through a heartbeat reply', async () => {
    plane.watches = false;
    start();
    const { queued, pid } = await slowRun();
    queued.stopWith = { reason: 'Cancelled by ci', finishAs: 'cancelled' };
    await plane.waitFor(queued.claim.run.id, (each) => each.finish !== null, 15_000);
    expect(queued.finish).toMatchObject({ status: 'cancelled', reason: 'Cancelled by ci' });
    expect(queued.watchesCancelled).toBe(0);
    expect(isAlive(pid)).toBe(false);
    expect(runner?.output()).toContain('the control plane refused the cancel watch');
    expect(runner?.output()).toMatch(/"via":"heartbeat"[^\n]*"msg":"the control plane stopped the run"/);
  });

  test('SIGTERM cancels the stage, releases the run to the queue and exits 0', async () => {
    const daemon = start();
    const { queued, pid } = await slowRun();
    expect(await daemon.stop('SIGTERM')).toBe(0);
    expect(queued.state).toBe('released');
    expect(queued.release?.reason).toMatch(/stopped/);
    expect(queued.finish).toBeNull();
    expect(isAlive(pid)).toBe(false);
  });

  test('a lost lease stops the stage and nothing more is written for the run', async () => {
    start();
    const { queued, pid } = await slowRun();
    queued.claim = { ...queued.claim, lease: 'f'.repeat(64) };
    await waitUntil(() => !isAlive(pid), 15_000);
    const count = plane.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = plane.requests.slice(count).filter((request) => request.line.includes(queued.claim.run.id));
    expect(after).toEqual([]);
    expect(queued.finish).toBeNull();
    expect(queued.release).toBeNull();
  });
});

describe('forks, secrets and the token', () => {
  const SHOW = `version: 1
env: [DEVICE]
stages:
  show:
    cmd: env | sort && ps -eo args && printf %s "$HF_TOKEN" | base64
`;

  test('a runner without --accept-forks gives fork runs back', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': SHOW } });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    start();
    const fork = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, fork: true }));
    await plane.waitFor(fork.claim.run.id, (run) => run.release !== null);
    expect(fork.release?.reason).toMatch(/--accept-forks/);
    expect(fork.started).toBeNull();
  });

  test('secrets are masked in every log, base64-encoded too; fork runs get neither secrets nor runner variables; the token reaches no stage', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': SHOW } });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    const secret = 'hf_s3cr3t_value_0123456789';
    const envFile = path.join(workDir, 'secrets.env');
    await writeFile(envFile, `HF_TOKEN=${secret}\n`);
    start({ acceptForks: true, envFile });
    const trusted = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
    await plane.waitFor(trusted.claim.run.id, (run) => run.finish !== null);
    const fork = plane.enqueue(
      makeClaim({ repoDir: repo.dir, commit, fork: true, fetchRef: 'refs/heads/main' }),
    );
    await plane.waitFor(fork.claim.run.id, (run) => run.finish !== null);
    expect(trusted.finish?.status).toBe('succeeded');
    expect(fork.finish?.status).toBe('succeeded');

    const trustedLog = logLines(plane.eventsOf(trusted.claim.run.id));
    const forkLog = logLines(plane.eventsOf(fork.claim.run.id));
    expect(trustedLog).toContain('HF_TOKEN=***');
    // What `printf %s "$HF_TOKEN" | base64` printed.
    expect(trustedLog).toContain('***');
    expect(trustedLog).toContain('DEVICE=cuda:0');
    expect(forkLog.filter((line) => /^(HF_TOKEN|DEVICE)=/.test(line))).toEqual([]);
    const everything =
      JSON.stringify([...plane.runs.values()].map((run) => [...run.events.values()])) +
      (runner?.output() ?? '');
    expect(everything).not.toContain(secret);
    const encoded = Buffer.from(secret).toString('base64');
    for (let at = 0; at + 8 <= encoded.length; at++)
      expect(everything).not.toContain(encoded.slice(at, at + 8));
    expect(everything).not.toContain(plane.token);
    expect(trustedLog.some((line) => line.startsWith('FLUKSIO_RUN_ID='))).toBe(true);
    expect(trustedLog.some((line) => line.startsWith('FLUKSIO_RUNNER_TOKEN'))).toBe(false);
  });
});

describe('the control plane goes away', () => {
  test('the run goes on, and once the control plane is back it finishes with every event exactly once', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  count:
    cmd: for i in $(seq 1 40); do echo "line $i"; echo "::metric name=step::$i"; sleep 0.05; done
`,
      },
    });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    start();
    const queued = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
    await plane.waitFor(queued.claim.run.id, (run) => run.started !== null);
    await plane.stop();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await plane.start();
    await plane.waitFor(queued.claim.run.id, (run) => run.finish !== null);
    expect(queued.finish).toMatchObject({ status: 'succeeded', metrics: { step: 40 } });
    const events = plane.eventsOf(queued.claim.run.id);
    expect(logLines(events)).toEqual(Array.from({ length: 40 }, (_, index) => `line ${index + 1}`));
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index));
  });
});

describe('the control plane refuses what the runner sends', () => {
  test("events refused for good (a 4xx) stop the run at once and fail it with the control plane's sentence", async () => {
    repo = await makeRepo({
      files: { 'fluksio.yml': 'version: 1\nstages:\n  long:\n    cmd: echo started && sleep 600\n' },
    });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    plane.refusal = {
      request: /^POST \/api\/v1\/runs\/[^/]+\/events$/,
      status: 400,
      error: 'events[0].stage: is not storable',
    };
    start();
    const queued = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
    // The stage would sleep ten minutes: the finish arriving at all means the run was stopped.
    const run = await plane.waitFor(queued.claim.run.id, (candidate) => candidate.finish !== null, 45_000);
    expect(run.finish).toMatchObject({ status: 'failed' });
    expect(run.finish?.reason).toContain(
      "The control plane refused the run's events: The control plane answered 400 to POST",
    );
    expect(run.finish?.reason).toContain('events[0].stage: is not storable');
    // The refused batch was not sent again and again: the runner gave up on it.
    const sent = plane.requests.filter((request) => request.line.endsWith('/events')).length;
    expect(sent).toBeLessThanOrEqual(3);
  });
});

function isAlive(pid: number): boolean {
  // kill(0) or kill(-1) would signal this process's group or everything: never a stage.
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`not a stage's pid: ${pid}`);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
