import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { StageGroups } from '../../runner/sandbox/stage-groups.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { sleeperAlive } from '../helpers/sleeper-alive.js';
import { waitFor } from '../helpers/wait-for.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { makeClaim } from './helpers/make-claim.js';
import { startRunner, type RunnerProcess } from './helpers/runner-process.js';

// A runner killed hard (kill -9, the OOM killer) cannot stop the stage it was running: the
// stage's process group lives on, training unseen, holding its GPU and writing into the
// checkout the run's next attempt is made in. The runner started next ends it first.

vi.setConfig({ testTimeout: 120_000 });

/** Sleeps no other test sleeps for (sleeper-alive.ts). */
const MARKER = 47_311;
const UNRELATED = 47_312;

let plane: FakeControlPlane;
let repo: TestRepo | null = null;
let workDir: string;
const runners: RunnerProcess[] = [];
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-leftovers-'));
});
afterEach(async () => {
  await Promise.all(runners.splice(0).map((runner) => runner.stop('SIGKILL')));
  await killSleepers(MARKER);
  await killSleepers(UNRELATED);
  await plane.stop();
  await repo?.cleanup();
  repo = null;
  await rm(workDir, { recursive: true, force: true });
});

const PIPELINE = `version: 1
stages:
  train:
    cmd: echo training && sleep ${MARKER}
    cache: false
`;

describe('a runner started after one was killed hard', () => {
  test('ends the stage processes the killed runner left running, before it claims anything', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    const env = { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token };
    const killed = startRunner({ workDir }, env);
    runners.push(killed);
    plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
    await waitFor('the stage to be running', () => sleeperAlive(MARKER));

    await killed.stop('SIGKILL');
    // Nothing else ends it: its runner is gone, and it prints nothing to fail on.
    expect(await sleeperAlive(MARKER)).toBe(true);

    const next = startRunner({ workDir }, env);
    runners.push(next);
    await waitFor('the runner started', () => next.output().includes('runner started'));
    expect(await sleeperAlive(MARKER)).toBe(false);
    const said = next
      .output()
      .split('\n')
      .filter((line) => line.includes('stage processes'));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0] as string)).toMatchObject({
      msg: 'ended the stage processes a runner killed before this start left running',
      stage: 'train',
      gone: true,
    });
    expect(await readdir(workDir)).not.toContain('stage-groups');
  });

  test('a stage that ended as it should leaves no record, and nothing is killed at the next start', async () => {
    repo = await makeRepo({
      files: { 'fluksio.yml': 'version: 1\nstages:\n  train:\n    cmd: echo done\n    cache: false\n' },
    });
    const commit = (await repo.git('rev-parse', 'HEAD')).trim();
    const env = { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token };
    const first = startRunner({ workDir }, env);
    runners.push(first);
    const { claim } = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
    await plane.waitFor(claim.run.id, (run) => run.finish !== null);
    expect(await readdir(path.join(workDir, 'stage-groups'))).toEqual([]);
    await first.stop('SIGKILL');
    const next = startRunner({ workDir }, env);
    runners.push(next);
    await waitFor('the runner started', () => next.output().includes('runner started'));
    expect(next.output()).not.toContain('stage processes');
  });
});

describe('StageGroups.killLeftovers', () => {
  test('never signals a process that now has a recorded pid but started at another time', async () => {
    const unrelated = spawn('sleep', [String(UNRELATED)], { detached: true, stdio: 'ignore' });
    unrelated.unref();
    const pid = unrelated.pid as number;
    await waitFor('the unrelated process', () => sleeperAlive(UNRELATED));
    const bootId = (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim();
    const dir = path.join(workDir, 'stage-groups');
    await mkdir(dir, { recursive: true });
    // What a record of a stage that ended long ago says, its pid since given to another process.
    await writeFile(
      path.join(dir, `${pid}.json`),
      JSON.stringify({ pid, startTicks: '1', bootId, runId: 'r', stage: 'train' }),
    );
    // And one from before a reboot, and one that is not a record.
    await writeFile(
      path.join(dir, '1.json'),
      JSON.stringify({ pid: 1, startTicks: '1', bootId: 'another-boot', runId: 'r', stage: 'x' }),
    );
    await writeFile(path.join(dir, '2.json'), 'not json');

    const leftovers = await new StageGroups(dir).killLeftovers();

    expect(leftovers).toEqual({ ended: [], unreadable: ['2.json'] });
    expect(await sleeperAlive(UNRELATED)).toBe(true);
    expect(await readdir(workDir)).toEqual([]);
  });
});

/** Kills every `sleep <marker>` on this machine: a failed test's leftovers. */
async function killSleepers(marker: number): Promise<void> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline !== `sleep\0${marker}\0`) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
