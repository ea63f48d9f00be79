import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quote } from 'shell-quote';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { TEST_BUNDLE } from '../global-setup.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli } from '../helpers/run-cli.js';

// A run ended from outside, as users end one: its output piped into `head` (which leaves),
// Ctrl-C in a shell loop of runs. Each run is recorded as it ended and leaves nothing behind.

vi.setConfig({ testTimeout: 120_000 });

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
stages:
  train:
    cmd: python3 train.py \${lr}
    deps: [train.py]
    params: [lr]
    cache: false
`;
// Prints a line every 50 ms for a minute: long after whoever reads it has gone.
const TRAIN = `import sys, time
print("started", sys.argv[1], flush=True)
for step in range(1200):
    print("step", step, flush=True)
    time.sleep(0.05)
`;

let repo: TestRepo;
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'train.py': TRAIN } });
});
afterEach(async () => {
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});
const env = () => ({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });

/** The runs of the project, newest first, as `fluksio runs --json` lists them. */
async function runs(): Promise<{ id: string; status: string; params: { lr: number } }[]> {
  const listed = await runCli(['runs', '--json'], { cwd: repo.dir, env: env() });
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as { id: string; status: string; params: { lr: number } }[];
}

test('`fluksio run | head` cancels the run when head leaves: recorded cancelled, no stack trace, nothing left behind', async () => {
  const child = spawn(process.execPath, [TEST_BUNDLE, 'run'], {
    cwd: repo.dir,
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...env() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  // `head -3`: reads until the stage has printed, then closes its end of the pipe.
  let stdout = '';
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (/train │ step 1\b/.test(stdout)) resolve();
    });
  });
  child.stdout.destroy();

  expect(await exited, stderr).toBe(1);
  expect(stderr).not.toMatch(/Unhandled 'error' event|EPIPE\s+at /);
  expect(stderr).toContain('its output was closed');
  const [run] = await runs();
  expect(run?.status).toBe('cancelled');
  // The stage's private folders and live log went with it.
  const store = join(repo.dir, '.fluksio');
  expect(readdirSync(store).filter((name) => name.startsWith('run-'))).toEqual([]);
  expect(existsSync(join(store, 'live', run?.id ?? ''))).toBe(false);
});

test('Ctrl-C in a shell loop of runs stops the loop, not only the run in progress', async () => {
  const marker = join(repo.dir, 'loop.log');
  const loop = `for lr in 0.1 0.2 0.3; do echo "lr=$lr" >> ${quote([marker])}; ${quote([process.execPath, TEST_BUNDLE])} run lr=$lr || echo "exit $?" >> ${quote([marker])}; done; echo finished >> ${quote([marker])}`;
  // A shell running a script, as `bash train-all.sh` does: it and its children form one
  // process group, which a terminal's Ctrl-C signals as a whole.
  const bash = spawn('bash', ['-c', loop], {
    cwd: repo.dir,
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...env() },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  bash.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  bash.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    bash.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  await new Promise<void>((resolve) => {
    const check = (chunk: Buffer) => {
      if (/train │ step 1\b/.test(output + chunk.toString())) {
        bash.stdout.off('data', check);
        resolve();
      }
    };
    bash.stdout.on('data', check);
  });
  process.kill(-(bash.pid ?? 0), 'SIGINT');

  // bash ends the loop when its child died of the SIGINT, as `sleep` or `python3` do;
  // a child that exits 1 instead reads to bash as one that handled it, and the loop goes on.
  const nextRun = new Promise<string>((resolve) => {
    const check = () => {
      if (/started 0\.2/.test(output)) resolve('the loop went on to lr=0.2');
    };
    bash.stdout.on('data', check);
  });
  const ended = await Promise.race([exited, nextRun]);
  if (ended === 'the loop went on to lr=0.2') process.kill(-(bash.pid ?? 0), 'SIGKILL');
  expect(ended, output).toBe('SIGINT');
  expect(await readFile(marker, 'utf8'), output).toBe('lr=0.1\n');
  const listed = await runs();
  expect(listed.map((run) => [run.params.lr, run.status])).toEqual([[0.1, 'cancelled']]);
});

test('`fluksio show RUN --log STAGE | head` ends without a word when head leaves: there is nothing to cancel', async () => {
  // A log far longer than a pipe holds, so the write meets the closed pipe.
  await repo.write('train.py', 'import sys\nfor step in range(40000):\n    print("step", step, "x" * 60)\n');
  await repo.commitAll('a long log');
  const made = await runCli(['run'], { cwd: repo.dir, env: env() });
  expect(made.code, made.stderr).toBe(0);
  const [run] = await runs();

  const child = spawn(process.execPath, [TEST_BUNDLE, 'show', run?.id ?? '', '--log', 'train'], {
    cwd: repo.dir,
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...env() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();

  expect(await exited, stderr).toBe(0);
  expect(stderr).toBe('');
});
