import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { makeMlProject } from '../helpers/ml-project.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runFluksio } from '../helpers/fluksio-process.js';
import { statuses, type RunJson } from '../helpers/run-cli.js';

/** `fluksio run --json …` as a process, parsed; fails with the output when it is not JSON. */
async function runJson(args: string[], cwd: string): Promise<RunJson & { selection: unknown }> {
  const result = await runFluksio(['run', '--json', ...args], { cwd });
  expect(result.code, result.stderr).toBe(0);
  const report = JSON.parse(result.stdout) as RunJson & { run: { selection: unknown } };
  return { ...report, selection: report.run.selection };
}

interface StatusJson {
  selection: unknown;
  stages: { name: string; action: string; reasons: string[]; cachedFrom: string | null; after: string[] }[];
}

async function statusJson(args: string[], cwd: string): Promise<StatusJson> {
  const result = await runFluksio(['status', '--json', ...args], { cwd });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

const actions = (status: StatusJson) =>
  Object.fromEntries(status.stages.map((stage) => [stage.name, stage.action]));

let repo: TestRepo;
let full: TestRepo;
beforeAll(async () => {
  [repo, full] = await Promise.all([makeMlProject(), makeMlProject()]);
});
afterAll(async () => {
  await Promise.all([repo.cleanup(), full.cleanup()]);
});

test('fluksio run STAGE runs it and what it needs, makes what a full run makes for those outs, and is never a baseline', async () => {
  const partial = await runJson(['train'], repo.dir);
  expect(statuses(partial)).toEqual({ prepare: 'ran', train: 'ran' });
  expect(partial.selection).toEqual({ named: ['train'], downstream: false, stages: ['prepare', 'train'] });
  expect(existsSync(join(repo.dir, 'metrics/eval.json'))).toBe(false);

  const whole = await runJson([], full.dir);
  expect(statuses(whole)).toEqual({ prepare: 'ran', train: 'ran', evaluate: 'ran' });
  for (const out of ['data/clean.csv', 'model.txt', 'metrics/train.json']) {
    expect(readFileSync(join(repo.dir, out), 'utf8'), out).toBe(readFileSync(join(full.dir, out), 'utf8'));
  }

  // The whole pipeline at the same commit: the partial run's stages are restored, and it is
  // not this run's baseline; the next whole run's is this one.
  const after = await runJson([], repo.dir);
  expect(statuses(after)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'ran' });
  expect(after.selection).toBeNull();
  expect(after.baseline).toBeNull();
  const again = await runJson([], repo.dir);
  expect(again.baseline?.id).toBe(after.run.id);

  const forced = await runJson(['train', '--force'], repo.dir);
  expect(statuses(forced)).toEqual({ prepare: 'cached', train: 'ran' });
  expect(forced.stages.find((stage) => stage.name === 'train')?.reasons).toEqual(['--force']);

  const text = await runFluksio(['run', 'train'], { cwd: repo.dir });
  expect(text.stdout).toMatch(/stages +prepare, train \(asked for train: a partial run, never a baseline\)/);
}, 300_000);

test('unknown stages: exit 2 naming them and the known stages, and nothing is recorded', async () => {
  const unknown = await makeMlProject();
  try {
    for (const command of ['run', 'status']) {
      const result = await runFluksio([command, 'trian', 'nope', 'lr=0.1'], { cwd: unknown.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        'No stage named "trian", "nope" in the pipeline; its stages are: prepare, train, evaluate',
      );
    }
    expect(existsSync(join(unknown.dir, '.fluksio'))).toBe(false);
  } finally {
    await unknown.cleanup();
  }
});

test('--queue runs every stage: stage names, --downstream and --force with it are refused, and nothing is recorded', async () => {
  const queued = await makeMlProject();
  try {
    for (const [args, leaveOut] of [
      [['train', 'lr=0.1'], 'the stage names (train)'],
      [['prepare', '--downstream'], 'the stage names (prepare)'],
      [['--force'], '--force'],
    ] as const) {
      const result = await runFluksio(['run', ...args, '--queue'], { cwd: queued.dir });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--queue: the control plane runs every stage; leave out ${leaveOut}`);
    }
    expect(existsSync(join(queued.dir, '.fluksio'))).toBe(false);
  } finally {
    await queued.cleanup();
  }
});

test('--downstream also runs what depends on the named stages, and what those need', async () => {
  const chain = await makeRepo({
    files: {
      '.gitignore': '/out/\n',
      'fluksio.yml': [
        'version: 1',
        'stages:',
        '  a: { cmd: "mkdir -p out && echo a > out/a.txt", outs: [out/a.txt] }',
        '  b: { cmd: "cat out/a.txt > out/b.txt", deps: [out/a.txt], outs: [out/b.txt] }',
        '  c: { cmd: "cat out/b.txt > out/c.txt", deps: [out/b.txt], outs: [out/c.txt] }',
        '  x: { cmd: "cat out/a.txt > out/x.txt", deps: [out/a.txt], outs: [out/x.txt] }',
        '',
      ].join('\n'),
    },
  });
  try {
    const plain = await runJson(['b'], chain.dir);
    expect(statuses(plain)).toEqual({ a: 'ran', b: 'ran' });
    const downstream = await runJson(['b', '--downstream'], chain.dir);
    expect(statuses(downstream)).toEqual({ a: 'cached', b: 'cached', c: 'ran' });
    expect(downstream.selection).toEqual({ named: ['b'], downstream: true, stages: ['a', 'b', 'c'] });
    expect(existsSync(join(chain.dir, 'out/x.txt'))).toBe(false);
    const lone = await runFluksio(['run', '--downstream'], { cwd: chain.dir });
    expect(lone.code).toBe(2);
    expect(lone.stderr).toContain('--downstream: name the stages to start from');
  } finally {
    await chain.cleanup();
  }
});

test('--force without stage names forces every stage; status --force and status STAGE --downstream say what run would do', async () => {
  const chain = await makeRepo({
    files: {
      '.gitignore': '/out/\n',
      'fluksio.yml': [
        'version: 1',
        'stages:',
        '  a: { cmd: "mkdir -p out && echo a > out/a.txt", outs: [out/a.txt] }',
        '  b: { cmd: "cat out/a.txt > out/b.txt", deps: [out/a.txt], outs: [out/b.txt] }',
        '  c: { cmd: "cat out/b.txt > out/c.txt", deps: [out/b.txt], outs: [out/c.txt] }',
        '  x: { cmd: "cat out/a.txt > out/x.txt", deps: [out/a.txt], outs: [out/x.txt] }',
        '',
      ].join('\n'),
    },
  });
  try {
    const first = await runJson([], chain.dir);
    expect(statuses(first)).toEqual({ a: 'ran', b: 'ran', c: 'ran', x: 'ran' });

    const forcedStatus = await statusJson(['--force'], chain.dir);
    expect(forcedStatus.selection).toBeNull();
    expect(forcedStatus.stages.map(({ name, action, reasons }) => [name, action, reasons])).toEqual([
      ['a', 'run', ['--force']],
      ['b', 'run', ['--force']],
      ['c', 'run', ['--force']],
      ['x', 'run', ['--force']],
    ]);

    const downstream = await statusJson(['b', '--downstream'], chain.dir);
    expect(downstream.selection).toEqual({ named: ['b'], downstream: true, stages: ['a', 'b', 'c'] });
    expect(actions(downstream)).toEqual({ a: 'restore', b: 'restore', c: 'restore' });
    // --force with names forces those only: what depends on them is restored if they make the same.
    const forcedDownstream = await statusJson(['b', '--downstream', '--force'], chain.dir);
    expect(actions(forcedDownstream)).toEqual({ a: 'restore', b: 'run', c: 'depends' });
    expect(forcedDownstream.stages[1]?.reasons).toEqual(['--force']);

    // The run does what status said: every stage again, as a whole run (so it may be a baseline).
    const forcedRun = await runJson(['--force'], chain.dir);
    expect(statuses(forcedRun)).toEqual({ a: 'ran', b: 'ran', c: 'ran', x: 'ran' });
    expect(forcedRun.stages.map((stage) => stage.reasons)).toEqual([
      ['--force'],
      ['--force'],
      ['--force'],
      ['--force'],
    ]);
    expect(forcedRun.selection).toBeNull();
    expect(forcedRun.baseline?.id).toBe(first.run.id);
  } finally {
    await chain.cleanup();
  }
}, 300_000);

test('fluksio status says what would run and why, from the read sets, and records nothing', async () => {
  const project = await makeMlProject();
  try {
    const before = await statusJson([], project.dir);
    expect(actions(before)).toEqual({ prepare: 'run', train: 'run', evaluate: 'run' });
    expect(before.stages[0]?.reasons).toEqual(['no earlier run of this stage']);
    // No run is recorded (only the code index's stat cache is kept, as a run keeps it).
    expect(existsSync(join(project.dir, '.fluksio/journal'))).toBe(false);

    const first = await runJson([], project.dir);
    const restored = await statusJson([], project.dir);
    expect(restored.stages.map(({ action, cachedFrom }) => [action, cachedFrom])).toEqual([
      ['restore', first.run.id],
      ['restore', first.run.id],
      ['restore', first.run.id],
    ]);

    // helpers.py is no dep of train: only its traced read set knows train reads it.
    await project.write('helpers.py', 'def scale(x):\n    return x / 10.0\n');
    const edited = await statusJson([], project.dir);
    expect(actions(edited)).toEqual({ prepare: 'restore', train: 'run', evaluate: 'depends' });
    expect(edited.stages[1]?.reasons).toEqual(['helpers.py changed']);
    expect(edited.stages[2]).toMatchObject({
      after: ['train'],
      cachedFrom: first.run.id,
      reasons: ['restored if train makes model.txt as before, else it runs'],
    });

    const params = await statusJson(['lr=0.5', 'evaluate'], project.dir);
    expect(params.stages[1]?.reasons).toEqual(['lr 0.01 → 0.5', 'helpers.py changed']);
    expect(params.selection).toBeNull();

    const journals = readdirSync(join(project.dir, '.fluksio/journal'));
    const status = await runFluksio(['status'], { cwd: project.dir });
    const dryRun = await runFluksio(['run', '--dry-run'], { cwd: project.dir });
    expect(status.code).toBe(0);
    expect(dryRun).toEqual(status);
    expect(status.stdout).toMatch(/^train +run +helpers\.py changed$/m);
    expect(readdirSync(join(project.dir, '.fluksio/journal'))).toEqual(journals);

    // The run then does what status said.
    const second = await runJson([], project.dir);
    expect(statuses(second)).toEqual({ prepare: 'cached', train: 'ran', evaluate: 'cached' });
    expect(second.stages[1]?.reasons).toEqual(['helpers.py changed']);
  } finally {
    await project.cleanup();
  }
}, 300_000);
