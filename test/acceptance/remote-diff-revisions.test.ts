import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

// `fluksio diff --remote` by git revision, against a real control plane and runner:
//
//   main:     C1 (run lr=0.5; a run of branch "elsewhere", lr=0.3)
//   feature:   └─ C2 (run lr=0.1) ── C3 (no run, checked out)

vi.setConfig({ testTimeout: 180_000, hookTimeout: 240_000 });

const MEASURED = `version: 1
params:
  lr: { type: float, default: 0.1 }
metrics:
  loss: { goal: min }
stages:
  train:
    cmd: echo "::metric name=loss::\${lr}"
    params: [lr]
`;

let database: TestDatabase;
let world: ControlPlaneWorld;
let repo: TestRepo;
let repository = '';
const commits = { c1: '', c2: '', c3: '' };
const runs = { main: '', feature: '', elsewhere: '' };
let env: Record<string, string> = {};

beforeAll(async () => {
  database = await createTestDatabase();
  world = new ControlPlaneWorld(database.db, database.url);
  await world.start();
  const project = await world.repo({ 'fluksio.yml': MEASURED, 'a.txt': '1\n' });
  ({ repo, repository } = project);
  await repo.git('remote', 'add', 'origin', repo.dir);
  await world.allow([repository]);
  await world.runner('cpu-box');
  commits.c1 = project.commit;
  await repo.git('checkout', '-q', '-b', 'feature');
  await repo.write('a.txt', '2\n');
  commits.c2 = await repo.commitAll('a change on the branch');
  await repo.write('a.txt', '3\n');
  commits.c3 = await repo.commitAll('another, not run');
  const submitted = (commit: string, lr: number, branch: string) =>
    world.submit({ repository, cloneUrl: project.cloneUrl, commit, params: { lr }, branch });
  runs.main = await submitted(commits.c1, 0.5, 'main');
  runs.feature = await submitted(commits.c2, 0.1, 'feature');
  runs.elsewhere = await submitted(commits.c1, 0.3, 'elsewhere');
  for (const id of Object.values(runs)) expect((await world.waitFor(id)).run.status).toBe('succeeded');
  env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };
});
afterAll(async () => {
  await world?.close();
  await database?.close();
});

interface DiffJson {
  run: { id: string; revision?: { name: string; commit: string | null; behind: number } };
  against: { id: string; revision?: { name: string; commit: string | null; behind: number } } | null;
  diff: { name: string; baseline: number | null; value: number | null }[];
}

async function diffJson(args: string[]): Promise<DiffJson> {
  const result = await runCli(['diff', ...args, '--remote', '--json'], { cwd: repo.dir, env });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as DiffJson;
}

test("two branches: each stands for the control plane's run at its commit, or its nearest ancestor's", async () => {
  const shown = await diffJson(['feature', 'main']);
  expect(shown.run).toMatchObject({
    id: runs.feature,
    revision: { name: 'feature', commit: commits.c3, behind: 1 },
  });
  // C1 has no run with the feature run's params (lr=0.1): its newest run stands for it.
  expect(shown.against).toMatchObject({
    id: runs.elsewhere,
    revision: { name: 'main', commit: commits.c1, behind: 0 },
  });
  expect(shown.diff.find((row) => row.name === 'loss')?.value).toBe(0.1);

  const text = await runCli(['diff', 'feature', 'main', '--remote'], { cwd: repo.dir, env });
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout.replace(/\s+/g, ' ')).toContain(
    `Run ${runs.feature.slice(0, 10)} (feature, at ${commits.c2.slice(0, 10)}) against run ${runs.elsewhere.slice(0, 10)} (main, at ${commits.c1.slice(0, 10)})`,
  );
  expect(text.stdout).toMatch(/loss\s+0\.3\s+0\.1\s+−0\.2/);
  expect(text.stdout.replace(/\s+/g, ' ')).toContain(
    `feature (${commits.c3.slice(0, 10)}) has no clean successful run on the control plane: its nearest first-parent ancestor with one is 1 commit back.`,
  );
});

test("a run and a revision: the revision's run is never the run itself", async () => {
  const shown = await diffJson([runs.main.slice(0, 20), 'rev:main']);
  expect(shown.run.id).toBe(runs.main);
  // The run is C1's newest with its params; the other run at C1 stands for main instead.
  expect(shown.against).toMatchObject({ id: runs.elsewhere, revision: { name: 'main', behind: 0 } });
  expect(shown.diff.find((row) => row.name === 'loss')).toMatchObject({ baseline: 0.3, value: 0.5 });
});

test("one revision alone: HEAD's run against the revision's", async () => {
  const shown = await diffJson(['main']);
  expect(shown.run).toMatchObject({
    id: runs.feature,
    revision: { name: 'HEAD', commit: commits.c3, behind: 1 },
  });
  expect(shown.against?.revision?.name).toBe('main');
});

test('a branch this clone does not have stands for its newest run on the control plane', async () => {
  const shown = await diffJson(['elsewhere', 'feature']);
  expect(shown.run).toMatchObject({
    id: runs.elsewhere,
    revision: { name: 'elsewhere', commit: null, behind: 0 },
  });
  expect(shown.against?.id).toBe(runs.feature);
});

test('a name that is nothing: exit 2 saying what it is not; a revision without runs says so', async () => {
  const unknown = await runCli(['diff', 'no-such-thing', '--remote'], { cwd: repo.dir, env });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(
    '"no-such-thing" is neither a run of the control plane (see fluksio runs --remote), a git revision here, nor a branch with a clean successful run of fluksio.yml there',
  );
  await repo.git('checkout', '-q', '--orphan', 'lonely');
  const lonely = await repo.commitAll('no history with runs');
  await repo.git('checkout', '-q', 'feature');
  const none = await runCli(['diff', 'lonely', 'main', '--remote'], { cwd: repo.dir, env });
  expect(none.code).toBe(2);
  expect(none.stderr).toContain(
    `lonely (${lonely.slice(0, 10)}) and its first-parent ancestors have no clean successful run of fluksio.yml on the control plane`,
  );
});

test('the runs API filters by commit, branch and state, and refuses a malformed filter saying what it expected', async () => {
  const list = async (query: string) => {
    const response = await fetch(`${world.app.url}/api/v1/runs?${query}`, {
      headers: { authorization: `Bearer ${world.apiToken}` },
    });
    return {
      status: response.status,
      body: (await response.json()) as { runs?: { id: string }[]; error?: string },
    };
  };
  const ids = async (query: string) => ((await list(query)).body.runs ?? []).map((run) => run.id).sort();
  expect(await ids(`commit=${commits.c1}`)).toEqual([runs.main, runs.elsewhere].sort());
  expect(await ids(`commit=${commits.c2},${commits.c3}`)).toEqual([runs.feature]);
  expect(await ids(`commit=${commits.c1}&branch=elsewhere`)).toEqual([runs.elsewhere]);
  expect(await ids('branch=feature&status=succeeded')).toEqual([runs.feature]);
  expect(await ids('branch=feature&status=failed')).toEqual([]);

  const badCommit = await list('commit=main');
  expect(badCommit.status).toBe(400);
  expect(badCommit.body.error).toContain('commit[0]: expected a full commit SHA');
  const badBranch = await list('branch=a..b');
  expect(badBranch.status).toBe(400);
  expect(badBranch.body.error).toContain('expected a branch name as git allows it');
  const badStatus = await list('status=done');
  expect(badStatus.status).toBe(400);
  expect(badStatus.body.error).toMatch(/^status: .*expected one of "queued"/);
});
