import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { makeRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';

/**
 * What a hostile stage (a fork's, once approved) puts where the summary, not the log, shows
 * it: an annotation whose message writes the clipboard (OSC 52) and sets the window title,
 * a streamed metric whose name clears the screen, and a metrics file whose key is a lying
 * hyperlink. The summary of `fluksio run`, `fluksio show RUN` (local or `--url`) and
 * `fluksio diff` print annotations and metric names.
 */
const PIPELINE = [
  'version: 1',
  'stages:',
  '  talk:',
  `    cmd: ${JSON.stringify(
    String.raw`printf '::warning file=train.py,line=1::warn\033]52;c;cm0gLXJmIH4=\007x\n::metric name=acc\033[2Jy::%s\n::notice::note\033]0;owned\007z\n' ${'$'}{n}; printf '{"m\033]8;;https://evil.example\007k\033]8;;\007": %s, "plain": %s}' ${'$'}{n} ${'$'}{n} > m.json`,
  )}`,
  '    params: [n]',
  '    metrics: [m.json]',
  'params:',
  '  n: { type: int, default: 1 }',
  '',
].join('\n');

/** The escape sequences of PIPELINE's stage that a terminal would obey; colours would be allowed. */
function rawEscapes(text: string): string[] {
  return ['\x1b]', '\x1b[2J', '\x07'].filter((sequence) => text.includes(sequence));
}

let database: TestDatabase;
let world: ControlPlaneWorld;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  if (world.app) await world.close();
});

test('escape sequences in annotations and metric names reach neither the summary of run and show, nor runs, a sweep table or diff raw', async () => {
  const repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, 'train.py': 'x\n' } });
  try {
    const run = await runCli(['run', '--no-cache'], { cwd: repo.dir, env: { NO_COLOR: '1' } });
    expect(run.code, run.stderr).toBe(0);
    expect(rawEscapes(run.stdout)).toEqual([]);
    // The summary still names them, without their sequences.
    expect(run.stdout).toContain('warnx');
    expect(run.stdout).toContain('accy');
    const other = await runCli(['run', 'n=2'], { cwd: repo.dir });
    expect(other.code, other.stderr).toBe(0);
    const table = await runCli(['runs'], { cwd: repo.dir });
    expect(table.code, table.stderr).toBe(0);
    expect(rawEscapes(table.stdout)).toEqual([]);
    expect(table.stdout).toContain('accy');
    const sweep = await runCli(['run', 'n=3,4'], { cwd: repo.dir });
    expect(sweep.code, sweep.stderr).toBe(0);
    expect(rawEscapes(sweep.stdout)).toEqual([]);
    const runs = JSON.parse((await runCli(['runs', '--json'], { cwd: repo.dir })).stdout) as { id: string }[];
    const [newest, older] = runs.map((listed) => listed.id);
    const shown = await runCli(['show', newest!], { cwd: repo.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(rawEscapes(shown.stdout)).toEqual([]);
    expect(shown.stdout).toContain('notez');
    const diff = await runCli(['diff', newest!, older!], { cwd: repo.dir });
    expect(diff.code, diff.stderr).toBe(0);
    expect(rawEscapes(diff.stdout)).toEqual([]);
    expect(diff.stdout).toContain('accy');
  } finally {
    await repo.cleanup();
  }
});

test('a run on a runner shown with `show --url`: its annotations and metric names reach the terminal without their sequences', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, 'train.py': 'x\n' });
  await world.allow([project.repository]);
  await world.runner('box');
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
    params: { n: 1 },
  });
  expect((await world.waitFor(runId)).run.status).toBe('succeeded');
  const shown = await runCli(['show', runId, '--url', world.app.url], {
    cwd: project.repo.dir,
    env: { FLUKSIO_TOKEN: world.apiToken },
  });
  expect(shown.code, shown.stderr).toBe(0);
  expect(rawEscapes(shown.stdout)).toEqual([]);
  expect(shown.stdout).toContain('warnx');
  expect(shown.stdout).toContain('accy');
});
