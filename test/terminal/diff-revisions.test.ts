import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson } from '../helpers/run-cli.js';
import { hasColor, runInTerminal, widestLine } from '../helpers/terminal-process.js';

// `fluksio diff` by git revision, in a real repository with runs on main and on a branch:
//
//   main:     C1 (run lr=0.1) ── C2 (no run)
//   feature:                      └─ C3 (run lr=0.3, checked out)

// Each command opens the project's embedded database: slow on a loaded 2-core machine.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
  seed: { type: int, default: 0 }
metrics:
  loss: { goal: min }
  accuracy: { goal: max }
stages:
  train:
    cmd: echo "::metric name=loss::\${lr}" && echo "::metric name=accuracy::0.5"
    params: [lr, seed]
`;

let repo: TestRepo;
let home: string;
const commits: Record<'c1' | 'c2' | 'c3', string> = { c1: '', c2: '', c3: '' };
let onMain = '';
let onFeature = '';
const env = () => ({ HOME: home, XDG_CACHE_HOME: join(home, '.cache') });

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'fluksio-home-'));
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'a.txt': '1\n' } });
  commits.c1 = (await repo.git('rev-parse', 'HEAD')).trim();
  const first = await runJson(['lr=0.1'], { cwd: repo.dir, env: env() });
  expect(first.code, first.stderr).toBe(0);
  onMain = first.report.run.id;
  await repo.write('a.txt', '2\n');
  commits.c2 = await repo.commitAll('main moves on');
  await repo.git('checkout', '-q', '-b', 'feature');
  await repo.write('a.txt', '3\n');
  commits.c3 = await repo.commitAll('a change on the branch');
  const second = await runJson(['lr=0.3'], { cwd: repo.dir, env: env() });
  expect(second.code, second.stderr).toBe(0);
  onFeature = second.report.run.id;
});
afterAll(async () => {
  await repo?.cleanup();
  await rm(home, { recursive: true, force: true });
});

async function piped(args: string[], code = 0): Promise<string> {
  const shown = spawnFluksio(args, { cwd: repo.dir, env: env() });
  expect(await shown.exited, shown.output()).toBe(code);
  return shown.output();
}

const s = (text: string) => text.slice(0, 10);

test("diff main compares this workspace's newest run with main's, saying that main's run is an ancestor's, and shows only what changed", async () => {
  expect(await piped(['diff', 'main'])).toBe(
    [
      `Run ${s(onFeature)} (the newest here, at ${s(commits.c3)}) against run ${s(onMain)} (main, at ${s(commits.c1)})`,
      `main (${s(commits.c2)}) has no clean successful run: its nearest first-parent ancestor with one is 1 commit back.`,
      '',
      'param  against  this run',
      'lr     0.1      0.3',
      '',
      'metric  against  this run  Δ     Δ%',
      'loss    0.1      0.3       +0.2  +200%  ❌ worse',
      '1 param and 1 metric unchanged (--all shows them)',
      '',
    ].join('\n'),
  );
});

test('diff BRANCH main --md --all is markdown for a pull request, with every param and metric', async () => {
  expect(await piped(['diff', 'feature', 'main', '--md', '--all'])).toBe(
    [
      `**Run ${s(onFeature)} (feature, at ${s(commits.c3)}) against run ${s(onMain)} (main, at ${s(commits.c1)})**`,
      '',
      `main (${s(commits.c2)}) has no clean successful run: its nearest first-parent ancestor with one is 1 commit back.`,
      '',
      '| param | against | this run |',
      '| :---- | :------ | :------- |',
      '| lr    | 0.1     | 0.3      |',
      '| seed  | 0       | 0        |',
      '',
      '| metric   | against | this run |    Δ |    Δ% |    |',
      '| :------- | ------: | -------: | ---: | ----: | :- |',
      '| loss     |     0.1 |      0.3 | +0.2 | +200% | ❌ |',
      '| accuracy |     0.5 |      0.5 |   ±0 |   ±0% |    |',
      '',
    ].join('\n'),
  );
});

test('a name that is both a run id prefix and a revision is the run, said with how to ask for the revision; rev: forces it', async () => {
  // Unique among the runs: two ids made within the same second share their first characters.
  const differsAt = [...onMain].findIndex((char, index) => char !== onFeature[index]);
  const prefix = onMain.slice(0, Math.max(8, differsAt + 1));
  await repo.git('tag', prefix, commits.c3);
  try {
    const asRun = await runCli(['diff', prefix, onFeature, '--json'], { cwd: repo.dir, env: env() });
    expect(asRun.code, asRun.stderr).toBe(0);
    const parsed = JSON.parse(asRun.stdout) as { run: { id: string }; against: { id: string } };
    expect([parsed.run.id, parsed.against.id]).toEqual([onMain, onFeature]);
    const text = await runCli(['diff', prefix, onFeature], { cwd: repo.dir, env: env() });
    expect(text.stdout).toContain(
      `"${prefix}" is also a git revision (${s(commits.c3)}); rev:${prefix} compares that instead.`,
    );

    const asRevision = await runCli(['diff', `rev:${prefix}`, 'main', '--json'], {
      cwd: repo.dir,
      env: env(),
    });
    expect(asRevision.code, asRevision.stderr).toBe(0);
    expect(JSON.parse(asRevision.stdout)).toMatchObject({
      run: { id: onFeature, revision: { name: prefix, commit: commits.c3, behind: 0 } },
      against: { id: onMain, revision: { name: 'main', commit: commits.c2, behind: 1 } },
      params: [
        { name: 'lr', against: 0.1, value: 0.3, changed: true },
        { name: 'seed', against: 0, value: 0, changed: false },
      ],
    });
  } finally {
    await repo.git('tag', '-d', prefix);
  }
});

test('a name that is neither a run nor a revision, or a revision without runs, exits 2 saying so', async () => {
  expect(await piped(['diff', 'no-such-branch'], 2)).toContain(
    '"no-such-branch" is neither a run (an id or the start of one, see fluksio runs) nor a git revision here (a branch, tag or commit)',
  );
  const orphan = await runCli(['diff', `rev:${commits.c1}~1`], { cwd: repo.dir, env: env() });
  expect(orphan.code).toBe(2);
  expect(orphan.stderr).toContain(`"${commits.c1}~1" is not a git revision here`);
});

test('on a 70-column terminal diff holds within the width with NO_COLOR, and a pipe gets no colour', async () => {
  const shown = runInTerminal(['diff', 'main'], {
    cwd: repo.dir,
    env: { ...env(), NO_COLOR: '1' },
    columns: 70,
  });
  expect(await shown.exited, shown.output()).toBe(0);
  expect(widestLine(shown.output()), shown.output()).toBeLessThanOrEqual(70);
  expect(hasColor(shown.output())).toBe(false);
  expect(shown.output()).toMatch(/loss\s+0\.1\s+0\.3\s+\+0\.2/);
  const help = await piped(['diff', '--help']);
  for (const option of ['--all', '--md', '--json', '--remote', 'rev:NAME']) expect(help).toContain(option);
});
