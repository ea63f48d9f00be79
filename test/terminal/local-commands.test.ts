import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson } from '../helpers/run-cli.js';
import { hasColor, runInTerminal, widestLine } from '../helpers/terminal-process.js';

// Each behaviour is pinned where a user meets it: on a pseudo-terminal of 70 columns
// (with and without NO_COLOR), and through a pipe.

// Several runs and commands each, on a loaded 2-core machine.
vi.setConfig({ testTimeout: 180_000 });

let repo: TestRepo;
let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
});
afterEach(async () => {
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
  note: { type: string, default: "a fairly long note about what this experiment tries out" }
metrics:
  loss: { goal: min }
  accuracy_on_the_held_out_validation_split: { goal: max }
stages:
  train:
    cmd: mkdir -p model && echo "\${lr} \${note}" > model/w.txt && echo "::metric name=loss::\${lr}" && echo "::metric name=accuracy_on_the_held_out_validation_split::0.5"
    params: [lr, note]
    outs: [model]
`;

const project = () => makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': 'model/\n' } });
// No control plane's store in this environment: gc collects the project's.
const env = () => ({
  HOME: home,
  XDG_CACHE_HOME: join(home, '.cache'),
  DATABASE_URL: undefined,
  FLUKSIO_DATA_DIR: undefined,
});

test('--version prints the version of the package', async () => {
  repo = await makeRepo({ files: {} });
  const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const shown = spawnFluksio(['--version'], { cwd: repo.dir });
  expect(await shown.exited).toBe(0);
  expect(shown.output().trim()).toBe(version);
});

describe('runs and diff on a 70-column terminal and through a pipe', () => {
  test('hold within 70 columns, print no colour with NO_COLOR or into a pipe, and keep every run id whole', async () => {
    repo = await project();
    const ids: string[] = [];
    for (const lr of ['0.3', '0.2', '0.1']) {
      const made = await runJson([`lr=${lr}`], { cwd: repo.dir, env: env() });
      expect(made.code, made.stderr).toBe(0);
      ids.push(made.report.run.id);
    }
    for (const args of [['runs'], ['diff', ids[2] ?? '', ids[0] ?? '']]) {
      const onTerminal = runInTerminal(args, {
        cwd: repo.dir,
        env: { ...env(), NO_COLOR: '1' },
        columns: 70,
      });
      expect(await onTerminal.exited, onTerminal.output()).toBe(0);
      expect(hasColor(onTerminal.output()), onTerminal.output()).toBe(false);
      expect(widestLine(onTerminal.output()), onTerminal.output()).toBeLessThanOrEqual(70);

      const piped = spawnFluksio(args, { cwd: repo.dir, env: { ...env(), NO_COLOR: undefined } });
      expect(await piped.exited, piped.output()).toBe(0);
      expect(hasColor(piped.output()), piped.output()).toBe(false);
      if (args[0] === 'runs') {
        for (const id of ids) {
          expect(onTerminal.output()).toContain(id.slice(0, 12));
          expect(piped.output()).toContain(id);
        }
        // A pipe is not cut to any width: each run is one line with its params whole.
        expect(piped.output()).toContain('note="a fairly long note about what this experiment tries out"');
      } else {
        expect(onTerminal.output()).toMatch(/loss\s+0\.3\s+0\.1\s+−0\.2/);
        expect(onTerminal.output()).toMatch(/✅\s+better/);
      }
    }
  });
});

describe('a failed stage', () => {
  const FAILING = `version: 1
stages:
  train:
    cmd: python3 train.py
`;
  const TRAIN = `print("epoch 1")
def step():
    raise ValueError("loss is nan")
step()
`;

  test('shows its traceback once on the terminal that ran it, and once in fluksio show', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': FAILING, 'train.py': TRAIN } });
    const ran = runInTerminal(['run'], { cwd: repo.dir, env: { ...env(), NO_COLOR: '1' } });
    expect(await ran.exited, ran.output()).toBe(1);
    const raised = (text: string) =>
      text.split('\n').filter((line) => line.includes('raise ValueError')).length;
    expect(raised(ran.output()), ran.output()).toBe(1);
    expect(ran.output()).toContain('its output is above');
    const runId = /fluksio run (\w{26})/.exec(ran.output())?.[1] ?? '';

    const shown = spawnFluksio(['show', runId.slice(0, 8)], { cwd: repo.dir, env: env() });
    expect(await shown.exited, shown.output()).toBe(0);
    expect(raised(shown.output()), shown.output()).toBe(1);
    expect(shown.output()).toContain('epoch 1');
    expect(shown.output()).toContain('train.py:3  error  ValueError: loss is nan');
  });

  test('show --log STAGE --json prints the log as JSON, for jq, and no raw text', async () => {
    repo = await makeRepo({ files: { 'fluksio.yml': FAILING, 'train.py': TRAIN } });
    const ran = await runCli(['run', '--json'], { cwd: repo.dir, env: env() });
    expect(ran.code, ran.stderr).toBe(1);
    const runId = (JSON.parse(ran.stdout) as { run: { id: string } }).run.id;
    const shown = await runCli(['show', runId.slice(0, 10), '--log', 'train', '--json'], {
      cwd: repo.dir,
      env: env(),
    });
    expect(shown.code, shown.stderr).toBe(0);
    const parsed = JSON.parse(shown.stdout) as { run: string; stage: string; status: string; log: string };
    expect(parsed).toMatchObject({ run: runId, stage: 'train', status: 'failed' });
    expect(parsed.log).toMatch(/^epoch 1\n/);
    expect(parsed.log).toContain('ValueError: loss is nan\n');
  });

  test('Ctrl-C stops a Python stage without leaving a KeyboardInterrupt annotation', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': FAILING,
        'train.py': 'import time\nprint("ready", flush=True)\ntime.sleep(60)\n',
      },
    });
    const ran = runInTerminal(['run'], { cwd: repo.dir, env: { ...env(), NO_COLOR: '1' } });
    await ran.waitFor(/train │ ready/);
    ran.type('\x03');
    // Killed by SIGINT once the run is recorded, as the shell's own programs end on Ctrl-C.
    expect(await ran.exited, ran.output()).toBe(130);
    const runId = /fluksio run (\w{26})/.exec(ran.output())?.[1] ?? '';
    const shown = await runCli(['show', runId, '--json'], { cwd: repo.dir, env: env() });
    const report = JSON.parse(shown.stdout) as {
      run: { status: string };
      annotations: { message: string }[];
    };
    expect(report.run.status).toBe('cancelled');
    expect(report.annotations.filter((note) => /KeyboardInterrupt/.test(note.message))).toEqual([]);
    expect(ran.output()).not.toMatch(/error\s+KeyboardInterrupt/);
  });
});

test('a silent stage shows its elapsed time on a terminal, and nothing of it in a pipe', async () => {
  repo = await makeRepo({
    files: { 'fluksio.yml': 'version: 1\nstages:\n  quiet:\n    cmd: sleep 2.5\n    cache: false\n' },
  });
  const onTerminal = runInTerminal(['run'], { cwd: repo.dir, env: { ...env(), NO_COLOR: '1' } });
  await onTerminal.waitFor(/running: quiet \d+\.\d+s/);
  expect(await onTerminal.exited, onTerminal.output()).toBe(0);
  expect(hasColor(onTerminal.output())).toBe(false);

  const piped = spawnFluksio(['run'], { cwd: repo.dir, env: env() });
  expect(await piped.exited, piped.output()).toBe(0);
  expect(piped.output()).not.toContain('running:');
  expect(piped.output()).not.toContain('\r');
});

describe('fluksio gc in a project', () => {
  test("collects the project's .fluksio/: old runs, their journals and blobs go, the newest success stays, and nothing is created under HOME", async () => {
    repo = await project();
    const runIds: string[] = [];
    for (const lr of ['0.3', '0.2', '0.1']) {
      const made = await runJson([`lr=${lr}`], { cwd: repo.dir, env: env() });
      expect(made.code, made.stderr).toBe(0);
      runIds.push(made.report.run.id);
    }
    const kept = await runCli(['gc', '--json'], { cwd: repo.dir, env: env() });
    expect(kept.code, kept.stderr).toBe(0);
    expect(JSON.parse(kept.stdout)).toMatchObject({
      store: 'local',
      runsDeleted: 0,
      blobsDeleted: 0,
      runsKept: 3,
    });

    // What a run killed outright leaves: its live logs and its stages' private folder.
    mkdirSync(join(repo.dir, '.fluksio', 'live', runIds[0] ?? ''), { recursive: true });
    writeFileSync(join(repo.dir, '.fluksio', 'live', runIds[0] ?? '', 'train.log'), 'epoch 1\n');
    mkdirSync(join(repo.dir, '.fluksio', 'run-abc123', 'train', 'home'), { recursive: true });
    const collected = await runCli(['gc', '--keep-days', '0', '--json'], { cwd: repo.dir, env: env() });
    expect(collected.code, collected.stderr).toBe(0);
    const result = JSON.parse(collected.stdout) as Record<string, number>;
    expect(result).toMatchObject({
      runsDeleted: 2,
      cacheEntriesDeleted: 2,
      runsKept: 1,
      abandonedFoldersDeleted: 2,
    });
    expect(existsSync(join(repo.dir, '.fluksio', 'live', runIds[0] ?? ''))).toBe(false);
    expect(existsSync(join(repo.dir, '.fluksio', 'run-abc123'))).toBe(false);
    expect(result.blobsDeleted).toBeGreaterThanOrEqual(2);
    expect(existsSync(join(home, '.local', 'share'))).toBe(false);
    expect(existsSync(join(repo.dir, '.fluksio', 'journal', `${runIds[0]}.jsonl`))).toBe(false);

    const listed = await runCli(['runs', '--json'], { cwd: repo.dir, env: env() });
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((run) => run.id)).toEqual([runIds[2]]);
    const again = await runJson(['lr=0.1'], { cwd: repo.dir, env: env() });
    expect(again.report.stages.map((stage) => stage.status)).toEqual(['cached']);
    const gone = await runJson(['lr=0.3'], { cwd: repo.dir, env: env() });
    expect(gone.report.stages.map((stage) => stage.status)).toEqual(['ran']);
  });

  test('outside a project with a store it says so, and creates nothing', async () => {
    repo = await project();
    const result = await runCli(['gc'], { cwd: repo.dir, env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No local store for fluksio.yml');
    expect(existsSync(join(repo.dir, '.fluksio'))).toBe(false);
    expect(existsSync(join(home, '.local'))).toBe(false);
  });
});

test('the runner logs readable lines on a terminal and JSON into a pipe', async () => {
  repo = await makeRepo({ files: {} });
  const runnerEnv = { ...env(), FLUKSIO_URL: 'http://127.0.0.1:9', FLUKSIO_RUNNER_TOKEN: 'fxr_test' };
  const args = ['runner', '--work-dir', join(home, 'work')];
  const onTerminal = runInTerminal(args, { cwd: repo.dir, env: { ...runnerEnv, NO_COLOR: '1' } });
  const started = await onTerminal.waitFor(/runner started/);
  expect(started).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: runner started \{.*"concurrency":1/);
  onTerminal.type('\x03');
  expect(await onTerminal.exited, onTerminal.output()).toBe(0);
  expect(hasColor(onTerminal.output())).toBe(false);

  const piped = spawnFluksio(args, { cwd: repo.dir, env: runnerEnv });
  const line = await piped.waitFor(/runner started/);
  expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'runner started', concurrency: 1 });
  expect(await piped.stop('SIGINT')).toBe(0);
});

test('a sweep ends with one table of its members, each against the baseline it had before, and the best by each goal', async () => {
  repo = await project();
  const before = await runJson(['lr=0.5'], { cwd: repo.dir, env: env() });
  expect(before.code, before.stderr).toBe(0);
  const swept = runInTerminal(['run', 'lr=0.3,0.1,0.2'], { cwd: repo.dir, env: { ...env(), NO_COLOR: '1' } });
  expect(await swept.exited, swept.output()).toBe(0);
  const output = swept.output();
  const tables = output.split('\n').filter((line) => /^Sweep \w+: 3 runs/.test(line));
  expect(tables, output).toEqual([
    expect.stringContaining(`each against run ${before.report.run.id.slice(0, 10)}`),
  ]);
  const table = output.slice(output.indexOf(tables[0] ?? ''));
  expect(widestLine(table), table).toBeLessThanOrEqual(70);
  // At 70 columns the long metric name leaves no room for the status: it is left out, said so.
  expect(table).toMatch(/^run\s+lr\s+loss\s+accuracy_on_the_held_out_validation_split$/m);
  expect(table).toMatch(/★ 0\.1\s+0\.5 \(\+0\.0%\)/);
  expect(table).toContain('(−80.0%)');

  const listed = await runCli(['runs', '--json'], { cwd: repo.dir, env: env() });
  const members = (
    JSON.parse(listed.stdout) as { id: string; groupId: string | null; params: { lr: number } }[]
  ).filter((run) => run.groupId !== null);
  expect(members).toHaveLength(3);
  const best = members.find((run) => run.params.lr === 0.1);
  expect(table).toMatch(new RegExp(`^loss \\(min\\)\\s+${best?.id.slice(0, 12)}\\s+0\\.1$`, 'm'));
  for (const member of members) {
    const diffed = await runCli(['diff', member.id, '--json'], { cwd: repo.dir, env: env() });
    expect((JSON.parse(diffed.stdout) as { against: { id: string } }).against.id).toBe(before.report.run.id);
  }
});

test("the run summary's tables end no line with spaces: their last columns are not padded", async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': [
        'version: 1',
        'stages:',
        '  a_stage_with_a_long_name: { cmd: "echo ::metric name=loss::0.5", cache: false }',
        '  b: { cmd: "echo ::metric name=a_longer_metric_name::1", cache: false }',
        '',
      ].join('\n'),
    },
  });
  const piped = spawnFluksio(['run'], { cwd: repo.dir, env: env() });
  expect(await piped.exited, piped.output()).toBe(0);
  const summary = piped.output().slice(piped.output().indexOf('\nRun '));
  expect(summary).toMatch(/^Stages$/m);
  expect(summary).toMatch(/^Metrics/m);
  expect(summary.split('\n').filter((line) => / $/.test(line))).toEqual([]);
});
