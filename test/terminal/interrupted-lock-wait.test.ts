import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { TEST_BUNDLE } from '../global-setup.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli } from '../helpers/run-cli.js';

// `fluksio run` waits for a store another process holds (through flock(1)); a signal during
// that wait ends it at once, with the signal's exit status and a sentence, as a signal
// during the run itself does. Sent to fluksio alone (`kill PID`) or to its process group
// (a terminal's Ctrl-C, `timeout`, a closed terminal), which flock(1) is part of.

vi.setConfig({ testTimeout: 90_000 });

const PIPELINE = `version: 1
stages:
  hello:
    cmd: echo hi > out.txt
    outs: [out.txt]
`;

let repo: TestRepo;
let home: string;
let holder: ChildProcess | null = null;
let waiting: ChildProcess | null = null;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
});
afterEach(async () => {
  killHolder();
  if (waiting?.exitCode === null && waiting.signalCode === null) process.kill(-(waiting.pid ?? 0), 'SIGKILL');
  waiting = null;
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});
const env = () => ({
  PATH: process.env.PATH,
  NO_COLOR: '1',
  HOME: home,
  XDG_CACHE_HOME: join(home, '.cache'),
});

/** Holds the store's lock as another fluksio process would, until killed. */
async function holdStore(): Promise<void> {
  await mkdir(join(repo.dir, '.fluksio', 'journal'), { recursive: true });
  const child = spawn(
    'flock',
    [join(repo.dir, '.fluksio', 'journal.lock-holder'), 'sh', '-c', 'echo held; exec sleep 600'],
    // Its own process group, killed whole: the sleep it runs holds the lock too.
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  );
  holder = child;
  await new Promise<void>((resolve) => child.stdout?.on('data', () => resolve()));
}

/** Ends the holder and what it runs, freeing the store. */
function killHolder(): void {
  if (holder?.pid) process.kill(-holder.pid, 'SIGKILL');
  holder = null;
}

/** Starts `fluksio run` in its own process group and resolves once it waits for the store. */
async function runWaitingForStore(): Promise<{
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string>;
}> {
  const child = spawn(process.execPath, [TEST_BUNDLE, 'run'], {
    cwd: repo.dir,
    env: env(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  waiting = child;
  let text = '';
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (/Waiting for another fluksio process/.test(text)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  });
  return { child, output: () => text, exited };
}

test.each([
  ['fluksio alone', 'SIGTERM', 143],
  ['its process group', 'SIGTERM', 143],
  ['its process group', 'SIGHUP', 129],
] as const)(
  'a signal to %s while `fluksio run` waits for the store (%s) ends it at once, exit %i, saying so',
  async (to, signal, status) => {
    await holdStore();
    const run = await runWaitingForStore();
    if (to === 'fluksio alone') run.child.kill(signal);
    else process.kill(-(run.child.pid ?? 0), signal);

    expect(await run.exited, run.output()).toBe(status);
    expect(run.output()).not.toMatch(/null|\n\s+at /);
    expect(run.output()).toMatch(new RegExp(`${signal} received.*waiting for another fluksio process`));
    // Nothing ran: with the store free again, the run finds nothing recorded.
    killHolder();
    const listed = await runCli(['runs', '--json'], { cwd: repo.dir, env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  },
);

test('Ctrl-C at the terminal while `fluksio run` waits for the store ends it killed by SIGINT, as a shell script expects', async () => {
  await holdStore();
  const run = await runWaitingForStore();
  process.kill(-(run.child.pid ?? 0), 'SIGINT');

  expect(await run.exited, run.output()).toBe('SIGINT');
  expect(run.output()).not.toMatch(/null|\n\s+at /);
});
