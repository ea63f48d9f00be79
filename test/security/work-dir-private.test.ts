import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ulid } from 'ulid';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { digestOf } from '../../core/canonical-json.js';
import { createRun } from '../../store/runs/create-run.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

const run = promisify(execFile);

let database: TestDatabase;
let world: ControlPlaneWorld;
let shared: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  world = new ControlPlaneWorld(database.db, database.url);
  // A directory other users can enter, as /srv or /var/lib are: the runner's --work-dir goes in it.
  shared = await mkdtemp(join(tmpdir(), 'fluksio-shared-'));
  await chmod(shared, 0o755);
});
afterEach(async () => {
  await world.close();
  await rm(shared, { recursive: true, force: true });
});

/** Runs a command as the machine's `nobody`: another local user of the runner's machine. */
async function asNobody(...command: string[]): Promise<{ code: number; stdout: string }> {
  return run('runuser', ['-u', 'nobody', '--', ...command]).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code?: number; stdout?: string }) => ({ code: error.code ?? -1, stdout: error.stdout ?? '' }),
  );
}

test('what a sandboxed stage leaves in its checkout, a setuid copy of cat among it, is out of other local users’ reach', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': `version: 1
stages:
  plant:
    cmd: cp /bin/cat suid-cat && chmod 4755 suid-cat && echo ok > out.txt
    outs: [out.txt]
`,
    '.gitignore': 'out.txt\nsuid-cat\n',
  });
  await world.allow([project.repository]);
  const token = `fxr_${randomBytes(32).toString('base64url')}`;
  const tokenFile = join(await world.scratch(), 'runner-token');
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  await createRunner({
    db: world.db,
    name: 'forks',
    owner: 'local',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  // Made as a user makes one (mkdir /srv/fluksio): readable by everyone.
  const workDir = join(shared, 'work');
  await mkdir(workDir, { mode: 0o755 });
  const runner = await startRunnerProcess({
    url: world.app.url,
    token,
    workDir,
    args: ['--accept-forks', '--token-file', tokenFile],
  });
  world.runners.push(runner);
  await runner.waitFor(/runner started/);

  const id = ulid();
  await createRun({
    db: world.db,
    run: {
      id,
      repository: project.repository,
      pipelinePath: 'fluksio.yml',
      trustDomain: 'pr:7',
      fork: true,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: {},
      paramsDigest: digestOf({}),
      status: 'queued',
      labels: [],
    },
  });
  const report = await world.waitFor(id);
  expect(report.run.status, JSON.stringify(report)).toBe('succeeded');
  const checkouts = join(workDir, 'checkouts', '0');
  const [checkout = ''] = await readdir(checkouts);
  const suidCat = join(checkouts, checkout, 'suid-cat');

  // The planted program is there, but another user can neither run it nor look around.
  const stolen = await asNobody(suidCat, tokenFile);
  expect(stolen.stdout).not.toContain(token);
  expect(stolen.code).not.toBe(0);
  expect((await asNobody('ls', join(workDir, 'mirrors'))).code).not.toBe(0);
}, 180_000);
