import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { spawnFluksio, runFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

// A `fluksio run` killed outright (kill -9, the OOM killer, a laptop whose battery ran out)
// writes no end to its run. The commands that list and show runs must not call it running
// forever, and must still call running a run that another terminal is executing.

vi.setConfig({ testTimeout: 120_000 });

const PIPELINE = `version: 1
stages:
  train:
    cmd: python3 train.py
    deps: [train.py]
    cache: false
`;
// Prints a step every 50 ms for a minute, ignoring a closed stdout, so it outlives its
// fluksio as a stage would; it leaves its pid for the test to end it.
const TRAIN = `import os, time
with open("train.pid", "w") as f:
    f.write(str(os.getpid()))
for step in range(1200):
    try:
        print("step", step, flush=True)
    except BrokenPipeError:
        pass
    time.sleep(0.05)
`;

let repo: TestRepo;
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'train.py': TRAIN } });
});
afterEach(async () => {
  const stage = await readFile(join(repo.dir, 'train.pid'), 'utf8').catch(() => null);
  if (stage !== null) {
    try {
      process.kill(Number(stage), 'SIGKILL');
    } catch {
      // Ended already.
    }
  }
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});
const env = () => ({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });

interface ListedRun {
  id: string;
  status: string;
  statusReason: string | null;
  finishedAt: string | null;
}

async function listedRuns(): Promise<ListedRun[]> {
  const listed = await runFluksio(['runs', '--json'], { cwd: repo.dir, env: env() });
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout) as ListedRun[];
}

test('a run whose fluksio was killed with kill -9 is listed abandoned, saying why; one still going is listed running', async () => {
  const running = spawnFluksio(['run'], { cwd: repo.dir, env: env() });
  await running.waitFor(/train │ step 1\b/);

  // Another terminal looks while the run goes on: it is running, and stays so.
  const [live] = await listedRuns();
  expect(live?.status).toBe('running');
  expect(running.child.exitCode).toBeNull();

  expect(await running.stop('SIGKILL')).toBe('SIGKILL');
  // Nothing else ends the stage: its fluksio is gone, and it ignores a closed stdout.
  expect(alive(Number(await readFile(join(repo.dir, 'train.pid'), 'utf8')))).toBe(true);
  // Killed in the middle of writing a line of its journal: what it tore is not read, and
  // the end written for it starts on a line of its own.
  const journal = join(repo.dir, '.fluksio', 'journal', `${live?.id}.jsonl`);
  await appendFile(journal, '{"type":"run.events","events":[{"type":"stage.fin');
  const [dead] = await listedRuns();
  expect(dead?.id).toBe(live?.id);
  expect(dead?.status).toBe('abandoned');
  expect(dead?.statusReason).toMatch(/fluksio run \(pid \d+\) ended before the run did/);
  expect(dead?.statusReason).toContain('train was running');
  // Its stage, which no one reads any more, does not train on unseen beside the next run.
  expect(dead?.statusReason).toMatch(/the processes it left running were killed \(train: pid \d+\)/);
  expect(alive(Number(await readFile(join(repo.dir, 'train.pid'), 'utf8')))).toBe(false);
  expect(dead?.finishedAt).not.toBeNull();

  // Its stage is not shown running either, in the summary or in JSON.
  const shown = await runFluksio(['show', dead?.id ?? ''], { cwd: repo.dir, env: env() });
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toContain('abandoned');
  expect(shown.stdout).toMatch(/train +⊘ cancelled .*fluksio run \(pid \d+\) ended while it ran/);
  const json = await runFluksio(['show', dead?.id ?? '', '--json'], { cwd: repo.dir, env: env() });
  const report = JSON.parse(json.stdout) as {
    stages: { name: string; status: string; error: string | null }[];
  };
  expect(report.stages).toEqual([
    expect.objectContaining({ name: 'train', status: 'cancelled', error: expect.stringMatching(/ended/) }),
  ]);

  // Said once, and the same the next time: the journal now records the end, whole lines only.
  expect((await listedRuns())[0]).toEqual(dead);
  const lines = (await readFile(journal, 'utf8')).split('\n');
  expect(lines.pop()).toBe('');
  expect(lines.map((line) => (JSON.parse(line) as { type: string }).type).at(-1)).toBe('run.finished');
});

/** Whether the process exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
