import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { spawnFluksio, type FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli } from '../helpers/run-cli.js';

// `fluksio gc` and `fluksio doctor --repair` stop at the first Ctrl-C, at a point where the
// store is whole, say so and end killed by SIGINT (130 to a shell), as `fluksio run` does.
// Ctrl-C lands while they wait for a store another process holds: the first point where a
// user, seeing nothing happen, presses it.

vi.setConfig({ testTimeout: 120_000 });

const PIPELINE = `version: 1
stages:
  hello:
    cmd: echo hi > out.txt
    outs: [out.txt]
`;

let repo: TestRepo;
let home: string;
let holder: ChildProcess | null = null;
let upkeep: FluksioProcess | null = null;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
});
afterEach(async () => {
  releaseStore();
  await upkeep?.stop('SIGKILL');
  upkeep = null;
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});
const env = () => ({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });

/** Holds the store's lock as a running `fluksio run` would, until released. */
async function holdStore(): Promise<void> {
  const child = spawn(
    'flock',
    [join(repo.dir, '.fluksio', 'journal.lock-holder'), 'sh', '-c', 'echo held; exec sleep 600'],
    // Its own process group, killed whole: the sleep it runs holds the lock too.
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  );
  holder = child;
  await new Promise<void>((resolve) => child.stdout?.on('data', () => resolve()));
}

function releaseStore(): void {
  if (holder?.pid) process.kill(-holder.pid, 'SIGKILL');
  holder = null;
}

test.each([[['gc', '--keep-days', '0']], [['doctor', '--repair']]])(
  'Ctrl-C stops `fluksio %j` waiting for the store: it says so, changes nothing and dies of SIGINT',
  async (args: string[]) => {
    const ran = await runCli(['run'], { cwd: repo.dir, env: env() });
    expect(ran.code, ran.stderr).toBe(0);
    const journals = () =>
      readdirSync(join(repo.dir, '.fluksio', 'journal')).filter((name) => name.endsWith('.jsonl'));
    expect(journals()).toHaveLength(1);

    await holdStore();
    upkeep = spawnFluksio(args, { cwd: repo.dir, env: env() });
    await upkeep.waitFor(/Waiting for another fluksio process/);
    upkeep.child.kill('SIGINT');
    // The store stays held: were the Ctrl-C ignored, the command would wait on for it.
    expect(await upkeep.exited, upkeep.output()).toBe('SIGINT');
    expect(upkeep.output()).toMatch(/stopped waiting for another fluksio process .*nothing was done/);
    expect(upkeep.output()).not.toMatch(/\n\s+at |null/);
    // The one run (older than --keep-days 0, yet the pipeline's baseline) and its store are as they were.
    expect(journals()).toHaveLength(1);
    expect(existsSync(join(repo.dir, '.fluksio', 'index'))).toBe(true);
    const listed = await runCli(['runs', '--json'], { cwd: repo.dir, env: env() });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);
  },
);
