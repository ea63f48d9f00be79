import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import type { TestRepo } from '../helpers/make-repo.js';
import { ML_FILES, makeMlProject } from '../helpers/ml-project.js';
import { runCli, statuses, type RunJson } from '../helpers/run-cli.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { hasColor, runInTerminal } from '../helpers/terminal-process.js';

const repos: TestRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

async function project(overrides: Record<string, string> = {}): Promise<TestRepo> {
  const repo = await makeMlProject(overrides);
  repos.push(repo);
  return repo;
}

/** `fluksio run --json ARGS` of a sweep: its group and members, in grid order. */
async function sweep(repo: TestRepo, args: string[]): Promise<{ group: string; runs: RunJson[] }> {
  const result = await runCli(['run', '--json', ...args], { cwd: repo.dir, env: { DEVICE: 'cpu' } });
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout) as { group: string; runs: RunJson[] };
}

/** The cache entries a store's index holds (file names are digests of their keys). */
async function cacheEntries(repo: TestRepo): Promise<string[]> {
  return (await readdir(join(repo.dir, '.fluksio', 'index', 'cache'))).sort();
}

// prepare is shared by every member (it lists only seed) and slow enough that the members
// reach it together: without coordination each would execute it.
const SLOW_PREPARE = {
  'prepare.py': `import time\ntime.sleep(1.5)\n${ML_FILES['prepare.py'] as string}`,
};

test('a sweep with -j 2 gives what -j 1 gives: the same statuses, metrics, cache keys and entries; the shared stage runs once', async () => {
  const one = await project(SLOW_PREPARE);
  const two = await project(SLOW_PREPARE);
  const grid = ['lr=0.1,0.3', 'epochs=3'];
  const serial = await sweep(one, [...grid, '-j', '1']);
  const parallel = await sweep(two, [...grid, '-j', '2']);

  expect(parallel.runs.map((run) => run.run.params)).toEqual(serial.runs.map((run) => run.run.params));
  for (const [index, member] of parallel.runs.entries()) {
    const twin = serial.runs[index] as RunJson;
    expect(member.run.status).toBe('succeeded');
    expect(member.metrics).toEqual(twin.metrics);
    expect(member.run.codeDigest).toBe(twin.run.codeDigest);
    expect(member.run.dirty).toBe(false);
    expect(member.stages.map((stage) => [stage.name, stage.cacheKey])).toEqual(
      twin.stages.map((stage) => [stage.name, stage.cacheKey]),
    );
  }
  expect(await cacheEntries(two)).toEqual(await cacheEntries(one));

  // prepare executed in one member; every other member restored that execution.
  const prepares = parallel.runs.map((run) => ({ id: run.run.id, stage: statuses(run).prepare }));
  const ran = prepares.filter((each) => each.stage === 'ran');
  expect(ran).toHaveLength(1);
  for (const run of parallel.runs) {
    const stage = run.stages.find((each) => each.name === 'prepare');
    if (stage?.status === 'cached') expect(stage.cachedFrom).toBe(ran[0]?.id);
  }
  // Which member executes it depends on which gets there first; the other stages are each member's own.
  const unshared = (run: RunJson) => ({ ...statuses(run), prepare: undefined });
  expect(parallel.runs.map(unshared)).toEqual(serial.runs.map(unshared));

  // The last member ran in the work tree: its outputs are the ones left there, as with -j 1.
  expect(await readFile(join(two.dir, 'model.txt'), 'utf8')).toBe(
    await readFile(join(one.dir, 'model.txt'), 'utf8'),
  );
  expect(await readFile(join(two.dir, 'model.txt'), 'utf8')).toMatch(/^lr=0.3 /);
  // No scratch checkout is left behind, on disk or in git's records.
  expect(existsSync(join(two.dir, '.fluksio', 'sweeps', parallel.group))).toBe(false);
  expect((await two.git('worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
  expect(await two.git('status', '--porcelain')).toBe('');

  // Run again with -j 2: every stage of every member is restored.
  const again = await sweep(two, [...grid, '-j', '2']);
  for (const run of again.runs) expect(Object.values(statuses(run))).toEqual(['cached', 'cached', 'cached']);
}, 180_000);

test('members run the work tree as it is: uncommitted edits, new modules, deletions and the ignored data the pipeline declares', async () => {
  const repo = await project({ 'unused.txt': 'tracked, then deleted\n' });
  // raw.csv becomes ignored data that only the work tree holds.
  await repo.git('rm', '-q', '--cached', 'raw.csv');
  await repo.write('.gitignore', `${ML_FILES['.gitignore'] as string}/raw.csv\n`);
  await repo.commitAll('raw.csv is data, not code');
  await repo.write('raw.csv', '5\n6\n7\n');
  await rm(join(repo.dir, 'unused.txt'));
  await repo.write('extra.py', 'VALUE = 7\n');
  await repo.write(
    'train.py',
    (ML_FILES['train.py'] as string).replace(
      'json.dump({"loss": loss}',
      'from extra import VALUE\njson.dump({"loss": loss, "edited": VALUE}',
    ),
  );

  const { runs } = await sweep(repo, ['lr=0.1,0.2', '-j', '2']);
  expect(runs).toHaveLength(2);
  for (const run of runs) {
    expect(run.run.status).toBe('succeeded');
    expect(run.run.dirty).toBe(true);
    expect(run.metrics).toMatchObject({ edited: 7 });
  }
  expect(runs[0]?.run.codeDigest).toBe(runs[1]?.run.codeDigest);

  // The first member ran in a scratch copy: a plain run here of its params keys every
  // stage alike, so everything is restored, from the data the copy was given.
  const here = await runCli(['run', '--json', 'lr=0.1'], { cwd: repo.dir, env: { DEVICE: 'cpu' } });
  expect(here.code, here.stderr).toBe(0);
  const report = JSON.parse(here.stdout) as RunJson;
  expect(report.run.codeDigest).toBe(runs[0]?.run.codeDigest);
  expect(statuses(report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
  expect(report.stages.find((stage) => stage.name === 'train')?.cachedFrom).toBe(runs[0]?.run.id);
  expect(await readFile(join(repo.dir, 'data', 'clean.csv'), 'utf8')).toBe('50\n60\n70\n');
}, 120_000);

test('a parallel sweep of named stages runs in each member only those stages and what they need, and records each member as partial', async () => {
  const repo = await project();
  const { runs } = await sweep(repo, ['train', 'lr=0.1,0.3', '-j', '2']);
  expect(runs.map((member) => member.run.params.lr)).toEqual([0.1, 0.3]);
  for (const member of runs) {
    expect(member.run.status).toBe('succeeded');
    expect(member.stages.map((stage) => stage.name).sort()).toEqual(['prepare', 'train']);
    expect((member.run as { selection?: unknown }).selection).toEqual({
      named: ['train'],
      downstream: false,
      stages: ['prepare', 'train'],
    });
  }
  // evaluate never ran in a member's checkout, nor here.
  expect(existsSync(join(repo.dir, 'metrics', 'eval.json'))).toBe(false);
  // A partial run is never a baseline: the full run that follows compares with none of them.
  const full = await runCli(['run', '--json', 'lr=0.1'], { cwd: repo.dir, env: { DEVICE: 'cpu' } });
  expect(full.code, full.stderr).toBe(0);
  const report = JSON.parse(full.stdout) as RunJson;
  expect(statuses(report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'ran' });
  expect(report.baseline ?? null).toBeNull();
});

test('-j 2 in a repository with no commit yet is refused before anything runs', async () => {
  const { makeRepo } = await import('../helpers/make-repo.js');
  const repo = await makeRepo({ files: ML_FILES, commit: false });
  repos.push(repo);
  const result = await runCli(['run', 'lr=0.1,0.2', '-j', '2'], { cwd: repo.dir, env: { DEVICE: 'cpu' } });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('no commit yet: commit once, or run with -j 1');
  expect(existsSync(join(repo.dir, '.fluksio'))).toBe(false);
});

test("a terminal shows every member's state as the sweep runs; a pipe gets each member's lines, tagged, and no board", async () => {
  const { makeRepo } = await import('../helpers/make-repo.js');
  const repo = await makeRepo({
    files: {
      'fluksio.yml':
        'version: 1\nparams:\n  n: { type: int, default: 1 }\nstages:\n  quiet:\n    cmd: sleep 2.5\n    params: [n]\n    cache: false\n',
    },
  });
  repos.push(repo);
  const onTerminal = runInTerminal(['run', 'n=1,2', '-j', '2'], { cwd: repo.dir, env: { NO_COLOR: '1' } });
  // Both members at once, each with its running stage and elapsed time.
  await onTerminal.waitFor(/^ {2}\[1\/2 n=1\] \w{10} {2}▸ quiet \d/);
  await onTerminal.waitFor(/^ {2}\[2\/2 n=2\] \w{10} {2}▸ quiet \d/);
  expect(await onTerminal.exited, onTerminal.output()).toBe(0);
  expect(hasColor(onTerminal.output())).toBe(false);

  const piped = spawnFluksio(['run', 'n=1,2', '-j', '2'], { cwd: repo.dir, env: {} });
  expect(await piped.exited, piped.output()).toBe(0);
  expect(piped.output()).toMatch(/ran\s+\[1\/2 n=1\] quiet/);
  expect(piped.output()).toMatch(/ran\s+\[2\/2 n=2\] quiet/);
  expect(piped.output()).toMatch(/\[2\/2 n=2\] succeeded/);
  expect(piped.output()).not.toContain('\u001b');
}, 120_000);

test('-j 2 runs two members at the same time: each waits for the other to have started, which a serial sweep never satisfies', async () => {
  const meeting = await mkdtemp(join(tmpdir(), 'fluksio-meeting-'));
  try {
    // Each member leaves its mark, then waits for the other's: run one after the other, the
    // first waits in vain and fails its stage.
    const meet = [
      'import os, sys, time',
      `MEETING = ${JSON.stringify(meeting)}`,
      'who = sys.argv[1]',
      'other = {"a": "b", "b": "a"}[who]',
      'open(os.path.join(MEETING, who), "w").close()',
      'deadline = time.monotonic() + 45',
      'while not os.path.exists(os.path.join(MEETING, other)):',
      '    if time.monotonic() > deadline:',
      '        sys.exit(f"{who}: {other} did not start while {who} ran")',
      '    time.sleep(0.05)',
      'print(f"{who} met {other}")',
      '',
    ].join('\n');
    const { makeRepo } = await import('../helpers/make-repo.js');
    const repo = await makeRepo({
      files: {
        'meet.py': meet,
        'fluksio.yml': [
          'version: 1',
          'params:',
          '  who: { type: string, enum: [a, b], default: a }',
          'stages:',
          '  meet: { cmd: "python3 meet.py ${who}", params: [who], cache: false }',
          '',
        ].join('\n'),
      },
    });
    repos.push(repo);
    const { runs } = await sweep(repo, ['who=a,b', '-j', '2']);
    expect(runs.map((run) => [run.run.params.who, run.run.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
    ]);
    expect((await readdir(meeting)).sort()).toEqual(['a', 'b']);
  } finally {
    await rm(meeting, { recursive: true, force: true });
  }
}, 180_000);
