import { afterEach, expect, test, vi } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson } from '../helpers/run-cli.js';

vi.setConfig({ testTimeout: 120_000 });

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1 }
metrics:
  loss: { goal: min }
stages:
  train:
    cmd: echo "::metric name=loss::\${lr}" && cat note.txt
    params: [lr]
    deps: [note.txt]
`;

const diffOf = async (args: string[]) => {
  const result = await runCli(['diff', ...args, '--json'], { cwd: repo.dir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { against: { id: string } | null };
};

test('a run is shown against the baseline it was compared with when it finished, never a run made later', async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'note.txt': 'a\n' } });
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const made = await runJson(['--no-cache'], { cwd: repo.dir });
    expect(made.code, made.stderr).toBe(0);
    ids.push(made.report.run.id);
  }
  const [first, second, third] = ids;
  expect((await diffOf([second ?? ''])).against?.id).toBe(first);
  expect((await diffOf([first ?? ''])).against).toBeNull();
  expect((await diffOf([third ?? ''])).against?.id).toBe(second);
  const shown = await runCli(['show', second ?? '', '--json'], { cwd: repo.dir });
  expect((JSON.parse(shown.stdout) as { baseline: { id: string } }).baseline.id).toBe(first);
});

test('a dirty run is never the baseline of another run, unless named', async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'note.txt': 'a\n' } });
  const clean = await runJson([], { cwd: repo.dir });
  await repo.write('note.txt', 'uncommitted\n');
  const dirty = await runJson(['lr=0.2'], { cwd: repo.dir });
  expect(dirty.report.run.dirty).toBe(true);
  expect(dirty.report.baseline?.id).toBe(clean.report.run.id);
  await repo.write('note.txt', 'a\n');
  const after = await runJson(['lr=0.3'], { cwd: repo.dir });
  expect(after.report.baseline?.id).toBe(clean.report.run.id);
  expect((await diffOf([after.report.run.id])).against?.id).toBe(clean.report.run.id);
  expect((await diffOf([after.report.run.id, dirty.report.run.id])).against?.id).toBe(dirty.report.run.id);
});
