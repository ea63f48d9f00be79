import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import { hashToken } from '../../app/http/hash-token.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import { sparkline } from '../../core/text/sparkline.js';
import type { RunReport } from '../../schemas/run-report.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

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
  await world.close();
});

// `prepare` is an untraced stage found by its exact key, with a directory out (restored
// from its manifest); `train` a traced Python stage, found by its manifest key's candidates
// and their read sets, streaming a series.
const FILES = {
  'fluksio.yml': `version: 1
params:
  lr: { type: float, default: 0.1, min: 0 }
metrics:
  loss: { goal: min }
stages:
  prepare:
    cmd: mkdir -p data && printf 'a,b\\n1,2\\n3,4\\n' > data/clean.csv && echo "prepared" > data/notes.txt
    outs: [data]
  train:
    cmd: python3 train.py \${lr}
    deps: [data]
    params: [lr]
    outs: [model.txt]
`,
  'train.py': `import sys
lr = float(sys.argv[1])
rows = open('data/clean.csv').read().splitlines()
for step in range(3):
    print(f'::metric name=loss::{lr / (step + 1)}')
open('model.txt', 'w').write(f'lr={lr} rows={len(rows)}\\n')
`,
  '.gitignore': 'data/\nmodel.txt\n',
};

/** A read-only API token reaching `repositories`. */
async function readToken(repositories: string[]): Promise<string> {
  const token = `fxt_${randomBytes(32).toString('base64url')}`;
  await createApiToken({
    db: world.db,
    name: `laptop-${randomBytes(3).toString('hex')}`,
    repositories,
    scope: 'read',
    tokenHash: hashToken(token),
  });
  world.tokens.push(token);
  return token;
}

/** A laptop's clone of the project: origin names the same repository on the control plane. */
async function laptop(project: { repo: { dir: string } }): Promise<string> {
  const dir = join(await world.scratch(), 'clone');
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile('git', ['clone', '-q', project.repo.dir, dir], (error) => (error ? reject(error) : resolve())),
  );
  return dir;
}

/** `fluksio run ARGS --json` in `cwd`; the exit code, the report and everything printed. */
async function fluksioRun(
  cwd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | string; report: RunReport | null; output: string }> {
  const run = spawnFluksio(['run', ...args, '--json'], { cwd, env });
  const code = await run.exited;
  const output = run.output();
  const start = output.indexOf('\n{');
  const json = output.startsWith('{') ? output : start >= 0 ? output.slice(start + 1) : '';
  return { code, report: json ? (JSON.parse(json) as RunReport) : null, output };
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

async function teamWorld() {
  await world.start();
  const project = await world.repo(FILES);
  await world.allow([project.repository]);
  await world.runner('cluster', { args: ['--accept-forks'] });
  const on = (params: Record<string, number>) =>
    world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params,
    });
  return { project, on };
}

test("a laptop restores the stages the team's runner computed, byte for byte, with their series; a different key runs here", async () => {
  const { project, on } = await teamWorld();
  const computed = await world.waitFor(await on({ lr: 0.5 }));
  expect(computed.run.status, JSON.stringify(computed.stages)).toBe('succeeded');
  expect(computed.stages.map((stage) => stage.status)).toEqual(['ran', 'ran']);
  // train is traced: its entry is found by its manifest key's candidates, prepare's by its exact key.
  const entries = await world.db.select().from(cacheEntries);
  expect(entries.map(({ stage, manifestKey }) => [stage, manifestKey !== null]).sort()).toEqual([
    ['prepare', false],
    ['train', true],
  ]);

  const dir = await laptop(project);
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: await readToken([project.repository]) };
  const restored = await fluksioRun(dir, ['lr=0.5', '--remote-cache'], env);
  expect(restored.code, restored.output).toBe(0);
  expect(
    restored.report?.stages.map(({ name, status, cachedFrom, cachedFromTeam }) => ({
      name,
      status,
      cachedFrom,
      cachedFromTeam,
    })),
  ).toEqual([
    { name: 'prepare', status: 'cached', cachedFrom: computed.run.id, cachedFromTeam: true },
    { name: 'train', status: 'cached', cachedFrom: computed.run.id, cachedFromTeam: true },
  ]);
  // The workspace holds the very bytes the runner stored.
  const model = computed.stages[1]?.outs.find((out) => out.path === 'model.txt');
  const modelBytes = await readFile(join(dir, 'model.txt'));
  expect(sha256(modelBytes)).toBe(model?.digest);
  expect(modelBytes.toString()).toBe('lr=0.5 rows=3\n');
  expect(await readFile(join(dir, 'data', 'clean.csv'), 'utf8')).toBe('a,b\n1,2\n3,4\n');
  expect(await readFile(join(dir, 'data', 'notes.txt'), 'utf8')).toBe('prepared\n');

  // The summary says where each stage came from; `show` draws the series the team's run streamed.
  const show = spawnFluksio(['show', restored.report?.run.id ?? ''], { cwd: dir, env });
  expect(await show.exited, show.output()).toBe(0);
  expect(show.output()).toMatch(/prepare\s+. cached\s+\S+\s+from the team's cache, run /);
  expect(show.output()).toContain(sparkline([0.5, 0.25, 0.5 / 3]));

  // Remembered here: without --remote-cache (and without the control plane) the next run restores it too.
  const offline = await fluksioRun(dir, ['lr=0.5'], {});
  expect(offline.code, offline.output).toBe(0);
  expect(offline.report?.stages.map((stage) => stage.status)).toEqual(['cached', 'cached']);

  // Another lr is another key: prepare still comes from the team, train runs here.
  const other = await fluksioRun(dir, ['lr=0.25', '--remote-cache'], env);
  expect(other.code, other.output).toBe(0);
  expect(other.report?.stages.map(({ status, cachedFromTeam }) => [status, cachedFromTeam])).toEqual([
    ['cached', false],
    ['ran', false],
  ]);
  expect(await readFile(join(dir, 'model.txt'), 'utf8')).toBe('lr=0.25 rows=3\n');
  // What the laptop computed never reached the control plane.
  const key = other.report?.stages[1]?.cacheKey ?? '';
  const asked = await fetch(
    `${world.app.url}/api/v1/team-cache/${key}?repository=${encodeURIComponent(project.repository)}`,
    { headers: { authorization: `Bearer ${env.FLUKSIO_TOKEN}` } },
  );
  expect(asked.status).toBe(404);
}, 240_000);

test("a fork's entry is never served to a laptop, and a corrupt blob is a miss: the stage runs", async () => {
  const { project, on } = await teamWorld();
  const forkRun = await world.waitFor(await world.queueForkRun(project, { lr: 0.125 }));
  expect(forkRun.run.status, JSON.stringify(forkRun.stages)).toBe('succeeded');
  const trusted = await world.waitFor(await on({ lr: 0.5 }));
  expect(trusted.run.status).toBe('succeeded');
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: await readToken([project.repository]) };

  // The fork's train entry exists on the control plane, but is not the team's.
  const forkKey = forkRun.stages[1]?.cacheKey ?? '';
  const [forkEntry] = await world.db.select().from(cacheEntries).where(eq(cacheEntries.key, forkKey));
  expect(forkEntry?.trustDomain).toBe('pr:7');
  const asked = await fetch(
    `${world.app.url}/api/v1/team-cache/${forkKey}?repository=${encodeURIComponent(project.repository)}`,
    { headers: { authorization: `Bearer ${env.FLUKSIO_TOKEN}` } },
  );
  expect(asked.status).toBe(404);
  const fromFork = await fluksioRun(await laptop(project), ['lr=0.125', '--remote-cache'], env);
  expect(fromFork.code, fromFork.output).toBe(0);
  expect(fromFork.report?.stages.map(({ status, cachedFromTeam }) => [status, cachedFromTeam])).toEqual([
    ['cached', true],
    ['ran', false],
  ]);

  // The stored model blob no longer holds its bytes (same length, one byte changed).
  const model = trusted.stages[1]?.outs.find((out) => out.path === 'model.txt');
  const hex = (model?.digest ?? '').slice('sha256:'.length);
  const blob = join(world.app.dataDir, 'blobs', 'sha256', hex.slice(0, 2), hex);
  const bytes = await readFile(blob);
  bytes[0] = bytes[0] === 0x78 ? 0x79 : 0x78;
  await writeFile(blob, bytes);
  const dir = await laptop(project);
  const corrupt = await fluksioRun(dir, ['lr=0.5', '--remote-cache'], env);
  expect(corrupt.code, corrupt.output).toBe(0);
  const train = corrupt.report?.stages[1];
  expect(train).toMatchObject({ status: 'ran', cachedFromTeam: false });
  expect(train?.reasons.join('; ')).toContain(`blob ${model?.digest} was corrupt`);
  expect(await readFile(join(dir, 'model.txt'), 'utf8')).toBe('lr=0.5 rows=3\n');
}, 240_000);

test('a token the control plane refuses exits 2 before anything runs; one that does not reach the repository too; an unreachable control plane is a warning and a local run', async () => {
  const { project } = await teamWorld();
  const dir = await laptop(project);

  const unknown = await fluksioRun(dir, ['--remote-cache'], {
    FLUKSIO_URL: world.app.url,
    FLUKSIO_TOKEN: 'fxt_not-a-token',
  });
  expect(unknown.code).toBe(2);
  expect(unknown.output).toContain(`--remote-cache: the control plane at ${world.app.url} refused`);
  expect(unknown.output).toContain('this API token is not known (it was revoked, or is mistyped)');
  expect(unknown.output).not.toContain('fxt_not-a-token');
  expect(existsSync(join(dir, '.fluksio'))).toBe(false);

  const elsewhere = await fluksioRun(dir, ['--remote-cache'], {
    FLUKSIO_URL: world.app.url,
    FLUKSIO_TOKEN: await readToken(['local/some/other/repo']),
  });
  expect(elsewhere.code).toBe(2);
  expect(elsewhere.output).toContain(`does not reach ${project.repository}`);
  expect(existsSync(join(dir, '.fluksio'))).toBe(false);

  const dryRun = await fluksioRun(dir, ['--remote-cache', '--dry-run'], { FLUKSIO_URL: world.app.url });
  expect(dryRun.code).toBe(2);
  expect(dryRun.output).toContain(
    "--dry-run says what this store would restore; it does not ask the team's cache",
  );

  const noToken = await fluksioRun(dir, ['--remote-cache'], { FLUKSIO_URL: world.app.url });
  expect(noToken.code).toBe(2);
  expect(noToken.output).toContain('No API token: set FLUKSIO_TOKEN');

  // A port nothing listens on: the run is local and succeeds.
  const closed = `http://127.0.0.1:${await closedPort()}`;
  const unreachable = await fluksioRun(dir, ['--remote-cache'], {
    FLUKSIO_URL: closed,
    FLUKSIO_TOKEN: await readToken([project.repository]),
  });
  expect(unreachable.code, unreachable.output).toBe(0);
  expect(unreachable.output).toContain(`warning: the team's cache at ${closed} did not answer`);
  expect(unreachable.report?.stages.map((stage) => stage.status)).toEqual(['ran', 'ran']);
}, 240_000);

/** A port that was free a moment ago and that nothing listens on. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 1;
}
