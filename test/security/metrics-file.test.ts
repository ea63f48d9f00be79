import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

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

/**
 * The fork author's pipeline: its stages cannot read the runner's token file in the
 * sandbox, but the runner reads each stage's metrics file itself, after the sandbox is
 * gone (it stores it as an out first, which is where both attempts are stopped). `leak` points its metrics file at the token file (a parse error quotes the
 * file's first bytes); `jam` makes it a FIFO no one will ever write, on which a read
 * would wait for ever and hold the runner's slot.
 */
const PIPELINE = `version: 1
params:
  token_file: { type: string, default: "" }
stages:
  leak:
    cmd: ln -s \${token_file} metrics.json
    params: [token_file]
    metrics: [metrics.json]
  jam:
    cmd: mkfifo jam.json
    metrics: [jam.json]
`;

test('a fork’s metrics file that is a symlink out of the checkout or a FIFO fails its stage, and the runner reads neither', async () => {
  await world.start();
  const scratch = await world.scratch();
  const project = await world.repo({
    'fluksio.yml': PIPELINE,
    '.gitignore': '*.json\n',
  });
  await world.allow([project.repository]);
  const tokenFile = join(scratch, 'runner-token');
  const token = `fxr_${randomBytes(32).toString('base64url')}`;
  await writeFile(tokenFile, `${token}\n`);
  await createRunner({
    db: world.db,
    name: 'forks',
    owner: 'local',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  const runner = await startRunnerProcess({
    url: world.app.url,
    token,
    args: ['--accept-forks', '--token-file', tokenFile],
  });
  world.runners.push(runner);
  await runner.waitFor(/runner started/);

  const report = await world.waitFor(await world.queueForkRun(project, { token_file: tokenFile }));
  expect(report.run.status, JSON.stringify(report)).toBe('failed');
  const stages = Object.fromEntries(report.stages.map((stage) => [stage.name, stage]));
  expect(stages.leak?.status).toBe('failed');
  expect(stages.leak?.error).toMatch(/metrics\.json.*symlink/);
  expect(stages.jam?.status).toBe('failed');
  expect(stages.jam?.error).toMatch(/"jam\.json" is neither a file nor a directory/);
  // Not one token character beyond its public prefix, anywhere the run's author can read.
  const secretPart = token.slice(4, 10);
  expect(JSON.stringify(report)).not.toContain(secretPart);
  expect(runner.output()).not.toContain(secretPart);
}, 180_000);
