import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';

const SECRET = 'Zq8sekretVy3kP0wLm2x';
/** Bytes of 'a' before the secret, so that the 1 MiB piece boundary falls 5 characters into it. */
const BEFORE = 1024 * 1024 - 5;

/** What a hostile stage prints: a window title, a clipboard write, a lying link, a screen clear. */
const ESCAPES = String.raw`printf '\033]0;owned\007\033]52;c;cm0gLXJmIH4=\033\\\033]8;;https://evil.example\007link\033]8;;\007\033[2J\033[31mred\033[0m\n'`;

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
  // The local tests start no control plane.
  if (world.app) await world.close();
});

async function logOf(runId: string, stage: string): Promise<string[]> {
  const response = await fetch(`${world.app.url}/api/v1/runs/${runId}/logs/${stage}`, {
    headers: { authorization: `Bearer ${world.apiToken}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { lines: string[] }).lines;
}

/** The OSC, screen-clearing and bell sequences found in printed text. */
function rawEscapes(text: string): string[] {
  return ['\x1b]', '\x1b[2J', '\x07'].filter((sequence) => text.includes(sequence));
}

/** Every run of 6 characters of the secret: none may appear anywhere. */
const SECRET_PARTS = [...Array(SECRET.length - 5).keys()].map((at) => SECRET.slice(at, at + 6));

test("a runner's secret straddling the 1 MiB piece boundary is masked whole; escapes never reach the terminal", async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': `version: 1
stages:
  leak:
    cmd: head -c ${BEFORE} /dev/zero | tr '\\0' a && printf '%s tail\\n' "$API_KEY" && ${ESCAPES}
`,
  });
  await world.allow([project.repository]);
  const envFile = join(await world.scratch(), 'secrets.env');
  await writeFile(envFile, `API_KEY=${SECRET}\n`);
  await world.runner('box', { args: ['--env-file', envFile] });
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  expect((await world.waitFor(runId)).run.status).toBe('succeeded');

  const lines = await logOf(runId, 'leak');
  const log = lines.join('');
  expect(log).toContain('***');
  expect(log).toContain(' tail');
  for (const part of SECRET_PARTS) expect(log).not.toContain(part);

  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };
  const shown = await runCli(['show', runId, '--remote', '--log', 'leak'], { cwd: project.repo.dir, env });
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toContain('\x1b[31mred\x1b[0m');
  expect(shown.stdout).toContain('link');
  expect(rawEscapes(shown.stdout)).toEqual([]);
  for (const part of SECRET_PARTS) expect(shown.stdout).not.toContain(part);
});

test('escape sequences from a stage reach neither `fluksio run` nor `show --log` raw', async () => {
  const repo = await makeRepo({
    files: { 'fluksio.yml': `version: 1\nstages:\n  talk:\n    cmd: ${ESCAPES}\n` },
  });
  try {
    const run = await runCli(['run'], { cwd: repo.dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('\x1b[31mred\x1b[0m');
    expect(rawEscapes(run.stdout)).toEqual([]);
    const runs = await runCli(['runs', '--json'], { cwd: repo.dir });
    const [listed] = JSON.parse(runs.stdout) as { id: string }[];
    const shown = await runCli(['show', listed?.id ?? '', '--log', 'talk'], { cwd: repo.dir });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe('link\x1b[31mred\x1b[0m\n');
  } finally {
    await repo.cleanup();
  }
});

test('a password in --url is never echoed', async () => {
  const dir = tmpdir();
  const runner = spawnFluksio(['runner', '--url', 'http://admin:hunter2-pw@127.0.0.1:9/x y'], {
    cwd: dir,
    env: { FLUKSIO_RUNNER_TOKEN: 'fxr_whatever' },
  });
  expect(await runner.exited).toBe(2);
  expect(runner.output()).toContain('--url: "http://***@127.0.0.1:9/x y"');
  const show = await runCli(['show', 'R', '--url', 'ftp://admin:hunter2@pw@example.com/'], {
    cwd: dir,
    env: { FLUKSIO_TOKEN: 'fxt_whatever' },
  });
  expect(show.code).toBe(2);
  for (const output of [runner.output(), show.stdout, show.stderr]) {
    expect(output).not.toContain('hunter2');
    expect(output).not.toContain('pw@');
  }
});

test('a dangling commit submitted by its SHA never runs', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': 'version: 1\nstages:\n  work:\n    cmd: echo ok > out.txt\n    outs: [out.txt]\n',
    '.gitignore': 'out.txt\n',
  });
  // A commit that was made, then dropped from the branch: its objects stay in the repository.
  await project.repo.write(
    'fluksio.yml',
    'version: 1\nstages:\n  work:\n    cmd: touch pwned; echo ok > out.txt\n    outs: [out.txt]\n',
  );
  const dangling = await project.repo.commitAll('not on any branch');
  await project.repo.git('reset', '--quiet', '--hard', 'HEAD~1');
  expect(await project.repo.git('branch', '--contains', dangling).catch(() => '')).toBe('');
  await world.allow([project.repository]);
  const runner = await world.runner('box');

  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: dangling,
  });
  const report = await world.waitFor(runId);
  expect(report.run.status).toBe('failed');
  expect(report.run.reason).toContain(
    `Commit ${dangling} is on no branch, tag or pull request of ${project.repository}`,
  );
  const entries = await readdir(runner.workDir, { recursive: true });
  expect(entries.filter((entry) => entry.endsWith('pwned'))).toEqual([]);

  // The branch's own commit still runs on the same runner.
  const good = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  expect((await world.waitFor(good)).run.status).toBe('succeeded');
  expect(existsSync(join(project.repo.dir, 'pwned'))).toBe(false);
});
