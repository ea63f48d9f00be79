import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { runFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

// A control plane and a runner as real processes; the commands run as a laptop runs them.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 240_000 });

const ROOT = `version: 1
params:
  lr: { type: float, default: 0.1 }
  seed: { type: int, default: 7 }
metrics:
  loss: { goal: min }
stages:
  train:
    cmd: echo "::metric name=loss::\${lr}"
    params: [lr, seed]
`;
/** A second pipeline in the same repository, whose runs `fluksio runs` here must not show. */
const OTHER = `version: 1
params:
  k: { type: int, default: 3 }
stages:
  count:
    cmd: echo "::metric name=count::\${k}"
    params: [k]
`;

let database: TestDatabase;
let world: ControlPlaneWorld;
let dir: string;
let env: Record<string, string>;
/** The root pipeline's runs by their lr. */
const byLr = new Map<number, string>();
let otherRun: string;

beforeAll(async () => {
  database = await createTestDatabase();
  world = new ControlPlaneWorld(database.db, database.url);
  await world.start();
  const project = await world.repo({ 'fluksio.yml': ROOT, 'other/fluksio.yml': OTHER });
  dir = project.repo.dir;
  await project.repo.git('remote', 'add', 'origin', dir);
  await project.repo.git('fetch', '-q', 'origin');
  await world.allow([project.repository]);
  await world.runner('cpu-box');
  env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };

  const sweep = await runFluksio(['submit', 'lr=0.5,0.1,0.3', '--json'], { cwd: dir, env });
  expect(sweep.code, sweep.stderr).toBe(0);
  const ids = (JSON.parse(sweep.stdout) as { runs: { id: string }[] }).runs.map((run) => run.id);
  [0.5, 0.1, 0.3].forEach((lr, index) => byLr.set(lr, ids[index] ?? ''));
  const other = await runFluksio(['submit', '--pipeline', 'other/fluksio.yml', '--json'], { cwd: dir, env });
  expect(other.code, other.stderr).toBe(0);
  otherRun = (JSON.parse(other.stdout) as { id: string }).id;
  for (const id of [...ids, otherRun]) expect((await world.waitFor(id)).run.status).toBe('succeeded');
});
afterAll(async () => {
  await world?.close();
  await database?.close();
});

/** `fluksio ARGS` here, against the control plane. */
const cli = (args: string[]) => runCli(args, { cwd: dir, env });

/** `fluksio runs --remote --json ARGS`: the runs listed, by their lr (or id for other pipelines). */
async function listed(args: string[] = []): Promise<(number | string)[]> {
  const result = await cli(['runs', '--remote', '--json', ...args]);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { id: string; params: { lr?: number } }[]).map(
    (run) => run.params.lr ?? run.id,
  );
}

test("runs --remote lists the pipeline looked at, as local runs does: not the repository's other pipelines", async () => {
  expect(await listed()).toEqual([0.3, 0.1, 0.5]);
  expect(await listed(['--pipeline', 'other/fluksio.yml'])).toEqual([otherRun]);
  const text = await cli(['runs', '--remote']);
  expect(text.stdout).toMatch(/^Runs of local\/\S+ \(fluksio\.yml\) on http/);
  expect(text.stdout).not.toContain(otherRun.slice(0, 12));

  const missing = await cli(['runs', '--remote', '--pipeline', 'nowhere/fluksio.yml']);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('--pipeline: nowhere/fluksio.yml does not exist');
});

test('runs --remote --filter and --sort select and order the runs; a bad expression exits 2', async () => {
  expect(await listed(['--filter', 'loss<0.4'])).toEqual([0.3, 0.1]);
  expect(await listed(['--filter', 'lr=0.5', '--filter', 'status=succeeded'])).toEqual([0.5]);
  // loss has goal min: best first.
  expect(await listed(['--sort', 'loss'])).toEqual([0.1, 0.3, 0.5]);
  expect(await listed(['--sort', 'lr', '--desc', '--limit', '2'])).toEqual([0.5, 0.3]);
  expect(await listed(['--sort', '-lr', '--limit', '1'])).toEqual([0.5]);

  const bad = await cli(['runs', '--remote', '--filter', 'nope>1']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('nope');
});

test('runs --remote --md and --csv print the table, only what differs unless --all', async () => {
  const md = await cli(['runs', '--remote', '--md']);
  expect(md.code, md.stderr).toBe(0);
  const [head, rule, ...rows] = md.stdout.trimEnd().split('\n');
  expect(head).toMatch(/^\| run .*\| lr +\| loss +\|/);
  expect(head).not.toContain('seed');
  expect(rule).toMatch(/^\| :?-+ /);
  expect(rows).toHaveLength(3);
  expect(rows[0]).toContain(byLr.get(0.3)?.slice(0, 12));
  const mdAll = await cli(['runs', '--remote', '--md', '--all']);
  expect(mdAll.stdout.split('\n')[0]).toMatch(/\| seed +\|/);

  const csv = await cli(['runs', '--remote', '--csv']);
  expect(csv.code, csv.stderr).toBe(0);
  const lines = csv.stdout.trimEnd().split('\r\n');
  expect(lines[0]).toBe('id,status,commit,dirty,lr,loss,created');
  expect(lines.slice(1).map((line) => line.split(',').slice(0, 2))).toEqual([
    [byLr.get(0.3), 'succeeded'],
    [byLr.get(0.1), 'succeeded'],
    [byLr.get(0.5), 'succeeded'],
  ]);
  const csvAll = await cli(['runs', '--remote', '--csv', '--all']);
  expect(csvAll.stdout.split('\r\n')[0]).toBe('id,status,commit,dirty,lr,seed,loss,created');

  const both = await cli(['runs', '--remote', '--md', '--csv']);
  expect(both.code).toBe(2);
  expect(both.stderr).toContain('--md, --csv: choose one output format');
});

test('diff --remote prints JSON, markdown, and with --all every param and metric', async () => {
  const [current, against] = [byLr.get(0.1) ?? '', byLr.get(0.5) ?? ''];
  const json = await cli(['diff', current, against, '--remote', '--json']);
  expect(json.code, json.stderr).toBe(0);
  const parsed = JSON.parse(json.stdout) as {
    run: { id: string };
    against: { id: string };
    params: { name: string; against: unknown; value: unknown; changed: boolean }[];
    diff: { name: string; baseline: number; value: number; better: boolean | null }[];
  };
  expect(parsed.run.id).toBe(current);
  expect(parsed.against.id).toBe(against);
  expect(parsed.params).toEqual([
    { name: 'lr', against: 0.5, value: 0.1, changed: true },
    { name: 'seed', against: 7, value: 7, changed: false },
  ]);
  expect(parsed.diff).toEqual([
    expect.objectContaining({ name: 'loss', baseline: 0.5, value: 0.1, better: true }),
  ]);

  const md = await cli(['diff', current.slice(0, 12), against.slice(0, 12), '--remote', '--md']);
  expect(md.code, md.stderr).toBe(0);
  expect(md.stdout).toMatch(/^\*\*Run .+ against run .+\*\*$/m);
  expect(md.stdout).toMatch(/^\| lr +\| 0\.5 +\| 0\.1 +\|$/m);
  expect(md.stdout).toMatch(/^\| loss +\| +0\.5 \| +0\.1 \| +−0\.4 \|.*\| ✅/m);
  expect(md.stdout).not.toMatch(/^\| seed/m);
  const mdAll = await cli(['diff', current, against, '--remote', '--md', '--all']);
  expect(mdAll.stdout).toMatch(/^\| seed +\| 7 +\| 7 +\|$/m);

  const text = await cli(['diff', current, against, '--remote']);
  expect(text.stdout).not.toMatch(/^seed/m);
  const textAll = await cli(['diff', current, against, '--remote', '--all']);
  expect(textAll.stdout).toMatch(/^seed +7 +7/m);
});
