import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson } from '../helpers/run-cli.js';
import { hasColor, runInTerminal, widestLine } from '../helpers/terminal-process.js';

// `fluksio runs` as an experiment table, through the real command: one project with five
// runs (four succeeded with varying params, one failed), read many ways.

// Each command opens the project's embedded database: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
  seed: { type: int, default: 0 }
  note: { type: string, default: plain }
metrics:
  loss: { goal: min }
  accuracy: { goal: max }
stages:
  train:
    cmd: test "\${lr}" != 9 && echo "::metric name=loss::\${lr}" && echo "::metric name=accuracy::0.5"
    params: [lr, seed, note]
`;

interface Listed {
  id: string;
  status: string;
  commit: string;
  params: Record<string, unknown>;
  createdAt: string;
}

let repo: TestRepo;
let home: string;
let commit: string;
/** The runs, oldest first: lr=0.3, 0.2, 0.1, then lr=0.2 seed=1 note="a|b c", then lr=9 (fails). */
let runs: Listed[];
const env = () => ({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
  commit = (await repo.git('rev-parse', 'HEAD')).trim();
  for (const params of [['lr=0.3'], ['lr=0.2'], ['lr=0.1'], ['lr=0.2', 'seed=1', 'note=a|b c'], ['lr=9']]) {
    const made = await runJson(params, { cwd: repo.dir, env: env() });
    expect(made.code === 0 || params[0] === 'lr=9', made.stderr).toBe(true);
  }
  const listed = await runCli(['runs', '--json'], { cwd: repo.dir, env: env() });
  runs = (JSON.parse(listed.stdout) as Listed[]).reverse();
  expect(runs.map((run) => run.status)).toEqual([
    'succeeded',
    'succeeded',
    'succeeded',
    'succeeded',
    'failed',
  ]);
});
afterAll(async () => {
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});

/** The command's output through a pipe (a real process), after it exits with `code`. */
async function piped(args: string[], code = 0): Promise<string> {
  const shown = spawnFluksio(args, { cwd: repo.dir, env: env() });
  expect(await shown.exited, shown.output()).toBe(code);
  return shown.output();
}

const run = (index: number): Listed => {
  const found = runs[index];
  if (!found) throw new Error(`no run ${index}`);
  return found;
};
const minute = (each: Listed) => each.createdAt.replace('T', ' ').slice(0, 16);

describe('fluksio runs', () => {
  test('is a row per run, newest first, with a column for each param and metric that varies; what every run shares is said under it', async () => {
    const c = commit.slice(0, 10);
    const rows = [
      [run(4).id, 'failed   ', c, '9  ', 'plain  ', '0   ', '–   ', minute(run(4))],
      [run(3).id, 'succeeded', c, '0.2', '"a|b c"', '1   ', '0.2 ', minute(run(3))],
      [run(2).id, 'succeeded', c, '0.1', 'plain  ', '0   ', '0.1 ', minute(run(2))],
      [run(1).id, 'succeeded', c, '0.2', 'plain  ', '0   ', '0.2 ', minute(run(1))],
      [run(0).id, 'succeeded', c, '0.3', 'plain  ', '0   ', '0.3 ', minute(run(0))],
    ];
    // The failed run has no accuracy, so accuracy varies too (a value some run lacks).
    const withAccuracy = rows.map((row, index) => [
      ...row.slice(0, 7),
      index === 0 ? '–       ' : '0.5     ',
      row[7],
    ]);
    expect(await piped(['runs'])).toBe(
      [
        `run                         status     commit      lr   note     seed  loss  accuracy  when`,
        ...withAccuracy.map((row) => row.join('  ')),
        '',
      ].join('\n'),
    );
  });

  test('--filter keeps the runs every expression holds for, and --sort orders them (a metric by its goal)', async () => {
    const c = commit.slice(0, 10);
    expect(
      await piped(['runs', '--filter', 'status=succeeded', '--filter', 'loss<0.25', '--sort', 'loss']),
    ).toBe(
      [
        'run                         status     commit      lr   note     seed  loss  when',
        `${run(2).id}  succeeded  ${c}  0.1  plain    0     0.1   ${minute(run(2))}`,
        `${run(3).id}  succeeded  ${c}  0.2  "a|b c"  1     0.2   ${minute(run(3))}`,
        `${run(1).id}  succeeded  ${c}  0.2  plain    0     0.2   ${minute(run(1))}`,
        'same in every run: accuracy=0.5',
        '',
      ].join('\n'),
    );
    // The order of many selections, in-process (each process would open the database again).
    const order = async (args: string[]) => {
      const listed = await runCli(['runs', '--json', ...args], { cwd: repo.dir, env: env() });
      expect(listed.code, listed.stderr).toBe(0);
      return (JSON.parse(listed.stdout) as Listed[]).map((each) =>
        runs.findIndex((known) => known.id === each.id),
      );
    };
    // loss has goal min: best (lowest) first; the failed run, without loss, last either way.
    expect(await order(['--sort', 'loss'])).toEqual([2, 3, 1, 0, 4]);
    expect(await order(['--sort', '-loss'])).toEqual([0, 3, 1, 2, 4]);
    expect(await order(['--sort', 'loss', '--desc'])).toEqual([0, 3, 1, 2, 4]);
    expect(await order(['--sort', 'lr', '--limit', '2'])).toEqual([2, 3]);
    expect(await order(['--filter', 'status=failed'])).toEqual([4]);
    expect(await order(['--filter', 'note=a|b c'])).toEqual([3]);
    expect(await order(['--filter', 'lr!=0.2', '--filter', 'seed=0', '--sort', 'when', '--asc'])).toEqual([
      0, 2, 4,
    ]);
  });

  test('--md is a GitHub markdown table, every cell escaped', async () => {
    const c = commit.slice(0, 10);
    expect(await piped(['runs', '--md', '--filter', 'lr=0.2'])).toBe(
      [
        '| run          | status    | commit     | note     | seed | when             |',
        '| :----------- | :-------- | :--------- | :------- | :--- | :--------------- |',
        `| ${run(3).id.slice(0, 12)} | succeeded | ${c} | "a\\|b c" | 1    | ${minute(run(3))} |`,
        `| ${run(1).id.slice(0, 12)} | succeeded | ${c} | plain    | 0    | ${minute(run(1))} |`,
        '',
      ].join('\n'),
    );
  });

  test('--csv is RFC 4180: CRLF, quoted only where needed, whole values; --all keeps what does not vary', async () => {
    expect(await piped(['runs', '--csv', '--all', '--filter', 'lr=0.2', '--sort', 'seed'])).toBe(
      [
        'id,status,commit,dirty,lr,note,seed,loss,accuracy,created',
        `${run(1).id},succeeded,${commit},false,0.2,plain,0,0.2,0.5,${run(1).createdAt}`,
        `${run(3).id},succeeded,${commit},false,0.2,a|b c,1,0.2,0.5,${run(3).createdAt}`,
        '',
      ].join('\r\n'),
    );
    await repo.write('quoted.yml', PIPELINE);
    const withComma = await runCli(['run', '--pipeline', 'quoted.yml', 'note=one\\, "two"'], {
      cwd: repo.dir,
      env: env(),
    });
    expect(withComma.code, withComma.stderr).toBe(0);
    const csv = await piped(['runs', '--pipeline', 'quoted.yml', '--csv', '--all']);
    expect(csv.split('\r\n')[1]).toMatch(/,"one, ""two""",/);
  });

  test('a bad filter or sort exits 2 naming every problem, what was wrong and what is expected', async () => {
    // Grammar problems are found before the store is opened.
    const grammar = await piped(
      ['runs', '--filter', 'lr>>0.1', '--filter', 'lr', '--sort', 'a b', '--csv', '--md'],
      2,
    );
    expect(grammar).toContain('--filter "lr>>0.1": > compares numbers, and ">0.1" is not one (e.g. lr>0.9)');
    expect(grammar).toContain(
      '--filter "lr" is not a filter: expected NAME OP VALUE with OP one of =, !=, <, <=, >, >= (e.g. lr=0.1, accuracy>0.9, status=failed)',
    );
    expect(grammar).toContain(
      '--sort "a b": expected a param or metric name, - before it for descending (e.g. -accuracy)',
    );
    expect(grammar).toContain('--md, --csv: choose one output format');
    // Names are checked against the runs.
    const names = await piped(
      ['runs', '--filter', 'lrr=0.1', '--filter', 'status=done', '--filter', 'status>1', '--sort', 'speed'],
      2,
    );
    expect(names).toContain(
      '--filter "lrr=0.1": no run has "lrr" (params: lr, note, seed; metrics: loss, accuracy; or id, status, commit, when)',
    );
    expect(names).toContain(
      '--filter "status=done": "done" is not a run status (one of queued, running, succeeded',
    );
    expect(names).toContain('--filter "status>1": status takes = or !=, not >');
    expect(names).toContain('--sort speed: no run has it');
  });

  test('on a 70-column terminal it holds within the width, with NO_COLOR or without, and prints no colour with NO_COLOR or into a pipe', async () => {
    for (const noColor of ['1', undefined]) {
      const shown = runInTerminal(['runs', '--all'], {
        cwd: repo.dir,
        env: { ...env(), NO_COLOR: noColor },
        columns: 70,
      });
      expect(await shown.exited, shown.output()).toBe(0);
      expect(widestLine(shown.output()), shown.output()).toBeLessThanOrEqual(70);
      if (noColor) expect(hasColor(shown.output())).toBe(false);
      // Short ids, each a prefix every command takes.
      for (const each of runs) expect(shown.output()).toContain(each.id.slice(0, 12));
    }
    expect(hasColor(await piped(['runs']))).toBe(false);
  });

  test('--help names every option', async () => {
    const help = await piped(['runs', '--help']);
    for (const option of [
      '--sort',
      '--desc',
      '--asc',
      '--filter',
      '--limit',
      '--all',
      '--md',
      '--csv',
      '--json',
      '--remote',
    ])
      expect(help).toContain(option);
  });
});
