import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/create-runner.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { sleeperAlive } from '../helpers/sleeper-alive.js';
import { attempts } from './attack-report.js';

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
 * The fork author's stage: each attempt prints what it got, base64-encoded, so that the
 * runner's masking of its secrets cannot hide a leak from this test.
 */
const ATTACK = String.raw`#!/bin/sh
token_file=$1 env_file=$2 runner_pid=$3 work_dir=$4 marker=$5
try() { printf '%s=%s\n' "$1" "$(sh -c "$2" 2>/dev/null | base64 -w0)"; }
try own "cat own.txt"
try token "cat '$token_file'"
try envfile "cat '$env_file'"
try environ "cat /proc/$runner_pid/environ"
try workspace "cat '$work_dir'/checkouts/*/*/victim.txt"
for config in "$work_dir"/mirrors/*.git/config; do
  printf '[core]\n\talternateRefsCommand = touch %s/pwned\n' "$work_dir" >>"$config" 2>/dev/null &&
    echo "mirror=$(echo wrote | base64 -w0)"
done
setsid sleep "$marker" >/dev/null 2>&1 </dev/null &
kill -0 $! && echo "daemon=alive"
echo done > out.txt
`;

const ATTACKER_PIPELINE = `version: 1
params:
  token_file: { type: string, default: "" }
  env_file: { type: string, default: "" }
  runner_pid: { type: int, default: 0 }
  work_dir: { type: string, default: "" }
  marker: { type: int, default: 0 }
stages:
  attack:
    cmd: sh attack.sh \${token_file} \${env_file} \${runner_pid} \${work_dir} \${marker}
    params: [token_file, env_file, runner_pid, work_dir, marker]
    outs: [out.txt]
`;

/** A trusted repository whose run leaves a file in its checkout, for the attacker to look for. */
const VICTIM_PIPELINE = `version: 1
stages:
  keep:
    cmd: echo "$VICTIM_SECRET" > victim.txt
    outs: [victim.txt]
`;

test('a sandboxed stage cannot read the runner token, the env-file, the runner’s environment or another run’s checkout, cannot write the mirror, and leaves no daemon', async () => {
  await world.start();
  const scratch = await world.scratch();
  const victim = await world.repo({ 'fluksio.yml': VICTIM_PIPELINE, '.gitignore': 'victim.txt\n' });
  const attacker = await world.repo({
    'fluksio.yml': ATTACKER_PIPELINE,
    'attack.sh': ATTACK,
    'own.txt': 'readable\n',
    '.gitignore': 'out.txt\n',
  });
  await world.allow([victim.repository, attacker.repository]);
  const secret = `victim-${randomBytes(8).toString('hex')}`;
  const envFile = join(scratch, 'runner.env');
  await writeFile(envFile, `VICTIM_SECRET=${secret}\n`);
  const tokenFile = join(scratch, 'runner-token');
  const token = `fxr_${randomBytes(32).toString('base64url')}`;
  await writeFile(tokenFile, `${token}\n`);
  await createRunner({
    db: world.db,
    name: 'sandboxed',
    owner: 'local',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  // The token is in the runner's environment too: /proc/<runner>/environ holds it.
  const runner = await startRunnerProcess({
    url: world.app.url,
    token,
    args: ['--sandbox', '--accept-forks', '--env-file', envFile, '--token-file', tokenFile],
  });
  world.runners.push(runner);
  await runner.waitFor(/runner started/);
  expect(runner.output()).toMatch(/"sandbox":"every run","bubblewrap":"bubblewrap \d/);

  const trusted = await world.waitFor(
    await world.submit({ repository: victim.repository, cloneUrl: victim.cloneUrl, commit: victim.commit }),
  );
  expect(trusted.run.status).toBe('succeeded');
  expect(trusted.sandbox).toMatch(/^bubblewrap \d/);
  // The victim's file is there on the runner: what the attacker goes after exists.
  const checkouts = join(runner.workDir, 'checkouts', '0');
  const [victimCheckout] = await readdir(checkouts);
  expect(await readFile(join(checkouts, victimCheckout ?? '', 'victim.txt'), 'utf8')).toBe(`${secret}\n`);
  const mirrorsBefore = await mirrorConfigs(runner.workDir);

  const marker = 900_000_000 + Math.floor(Math.random() * 99_999_999);
  const runId = await world.queueForkRun(attacker, {
    token_file: tokenFile,
    env_file: envFile,
    runner_pid: runner.child.pid ?? 0,
    work_dir: runner.workDir,
    marker,
  });
  const attack = await world.waitFor(runId);
  expect(attack.run.status, JSON.stringify(attack)).toBe('succeeded');
  const got = await attempts(world, runId, 'attack');
  expect(got.own).toBe('readable\n');
  expect(got.log).toContain('daemon=alive');
  expect(got.token).toBe('');
  expect(got.envfile).toBe('');
  expect(got.environ).toBe('');
  expect(got.workspace).toBe('');
  expect(got.mirror).toBeUndefined();
  expect(got.log).not.toContain(token);
  expect(got.log).not.toContain(secret);
  const mirrorsAfter = await mirrorConfigs(runner.workDir);
  expect(mirrorsAfter).toMatchObject(mirrorsBefore);
  expect(Object.values(mirrorsAfter).join('')).not.toContain('alternateRefsCommand');
  expect(await sleeperAlive(marker)).toBe(false);
  expect(attack.sandbox).toMatch(/^bubblewrap \d.*own user and PID namespaces/);

  // The next trusted run fetches through the mirror the attacker aimed at: nothing runs.
  const again = await world.waitFor(
    await world.submit({ repository: victim.repository, cloneUrl: victim.cloneUrl, commit: victim.commit }),
  );
  expect(again.run.status).toBe('succeeded');
  expect(existsSync(join(runner.workDir, 'pwned'))).toBe(false);

  const show = spawnFluksio(['show', runId, '--url', world.app.url], {
    cwd: scratch,
    env: { FLUKSIO_TOKEN: world.apiToken },
  });
  expect(await show.exited, show.output()).toBe(0);
  expect(show.output()).toMatch(/sandbox {2}bubblewrap \d/);
}, 180_000);

test('without --sandbox a fork run is sandboxed anyway, and a trusted run is said to be unsandboxed', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': `version: 1
params:
  marker: { type: int, default: 0 }
stages:
  work:
    cmd: setsid sleep \${marker} >/dev/null 2>&1 </dev/null & echo ok > out.txt
    params: [marker]
    outs: [out.txt]
`,
    '.gitignore': 'out.txt\n',
  });
  await world.allow([project.repository]);
  const runner = await world.runner('forks', { args: ['--accept-forks'] });
  await runner.waitFor(/runner started/);
  expect(runner.output()).toMatch(/"sandbox":"fork runs"/);

  const marker = 900_000_000 + Math.floor(Math.random() * 99_999_999);
  const fork = await world.waitFor(await world.queueForkRun(project, { marker }));
  expect(fork.run.status).toBe('succeeded');
  expect(fork.sandbox).toMatch(/^bubblewrap \d/);
  expect(await sleeperAlive(marker)).toBe(false);

  const trusted = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { marker: marker + 1 },
    }),
  );
  expect(trusted.run.status).toBe('succeeded');
  expect(trusted.sandbox).toBeNull();
  const show = spawnFluksio(['show', trusted.run.id, '--url', world.app.url], {
    cwd: project.repo.dir,
    env: { FLUKSIO_TOKEN: world.apiToken },
  });
  expect(await show.exited, show.output()).toBe(0);
  expect(show.output()).toContain("sandbox  none: the stages ran as the runner's user");
}, 180_000);

test('a runner accepting forks where bubblewrap cannot run gives fork runs back with the reason, and --sandbox refuses to start', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': 'version: 1\nstages:\n  work:\n    cmd: echo ok > out.txt\n    outs: [out.txt]\n',
    '.gitignore': 'out.txt\n',
  });
  await world.allow([project.repository]);
  // A PATH with git but no bwrap.
  const bin = join(await world.scratch(), 'bin');
  await mkdir(bin);
  await symlink('/usr/bin/git', join(bin, 'git'));
  const env = { PATH: bin };

  const refused = await world.runner('no-sandbox', { args: ['--sandbox'], env });
  expect(await refused.exited).toBe(1);
  expect(refused.output()).toContain('--sandbox: bwrap is not on the PATH');

  const runner = await world.runner('no-bwrap', { args: ['--accept-forks'], env });
  await runner.waitFor(/fork runs will be given back/);
  const trusted = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
    }),
  );
  expect(trusted.run.status).toBe('succeeded');
  expect(trusted.sandbox).toBeNull();

  const fork = await world.waitFor(await world.queueForkRun(project, {}), (report) =>
    (report.run.reason ?? '').startsWith('This runner'),
  );
  expect(fork.run.status).toBe('queued');
  expect(fork.run.reason).toMatch(
    /^This runner executes fork pull requests only in a sandbox, and it has none: bwrap is not on the PATH/,
  );
  expect(fork.stages).toEqual([]);
}, 180_000);

/** Every mirror's config, by mirror. */
async function mirrorConfigs(workDir: string): Promise<Record<string, string>> {
  const mirrors = join(workDir, 'mirrors');
  const configs: Record<string, string> = {};
  for (const name of await readdir(mirrors))
    configs[name] = await readFile(join(mirrors, name, 'config'), 'utf8');
  return configs;
}
