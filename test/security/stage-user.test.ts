import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/create-runner.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { startRunnerProcess } from '../helpers/control-plane-processes.js';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { sleeperAlive } from '../helpers/sleeper-alive.js';
import { attempts } from './attack-report.js';
import { stageTestUser, type StageTestUser } from '../helpers/stage-test-user.js';

/** The dedicated user the stages run as; made here when the machine has none. */
const STAGE_USER = 'fluksio-stage-test';

let database: TestDatabase;
let world: ControlPlaneWorld;
let stageUser: StageTestUser;
let stageUid = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  stageUser = stageTestUser(STAGE_USER);
  stageUid = stageUser.user.uid;
});
afterAll(async () => {
  await database.close();
  stageUser.remove();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/**
 * The attacker's stage: each attempt prints what it got, base64-encoded, so that the
 * runner's masking of its secrets cannot hide a leak from this test.
 */
const ATTACK = String.raw`#!/bin/sh
token_file=$1 env_file=$2 runner_pid=$3 victim=$4 mirror=$5 work_dir=$6 marker=$7
try() { printf '%s=%s\n' "$1" "$(sh -c "$2" 2>/dev/null | base64 -w0)"; }
try uid "id -u"
try own "cat own.txt"
try token "cat '$token_file'"
try envfile "cat '$env_file'"
try environ "cat /proc/$runner_pid/environ"
try workspace "cat '$victim'/victim.txt"
try listing "ls '$work_dir' '$work_dir'/checkouts/0 '$work_dir'/mirrors '$work_dir'/blobs"
printf '[core]\n\talternateRefsCommand = touch %s/pwned\n' "$work_dir" >>"$mirror" 2>/dev/null &&
  echo "mirror=$(echo wrote | base64 -w0)"
echo left >/tmp/fluksio-leftover-$marker
setsid sleep "$marker" >/dev/null 2>&1 </dev/null &
kill -0 $! && echo "daemon=alive"
echo done > out.txt
`;

const ATTACKER_PIPELINE = `version: 1
params:
  token_file: { type: string, default: "" }
  env_file: { type: string, default: "" }
  runner_pid: { type: int, default: 0 }
  victim: { type: string, default: "" }
  mirror: { type: string, default: "" }
  work_dir: { type: string, default: "" }
  marker: { type: int, default: 0 }
stages:
  attack:
    cmd: sh attack.sh \${token_file} \${env_file} \${runner_pid} \${victim} \${mirror} \${work_dir} \${marker}
    params: [token_file, env_file, runner_pid, victim, mirror, work_dir, marker]
    outs: [out.txt]
`;

/** A repository whose run leaves a secret in its checkout, for the attacker to look for. */
const VICTIM_PIPELINE = `version: 1
stages:
  keep:
    cmd: echo "$VICTIM_SECRET" > results/victim.txt && cp results/victim.txt victim.txt
    outs: [results/victim.txt]
`;

/** A token file and an env-file only the runner may read, in a directory anyone may pass through. */
async function runnerFiles(
  secret: string,
): Promise<{ dir: string; tokenFile: string; envFile: string; token: string }> {
  const dir = await world.scratch();
  await chmod(dir, 0o755);
  const envFile = join(dir, 'runner.env');
  await writeFile(envFile, `VICTIM_SECRET=${secret}\n`, { mode: 0o600 });
  const tokenFile = join(dir, 'runner-token');
  const token = `fxr_${randomBytes(32).toString('base64url')}`;
  await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  await createRunner({
    db: world.db,
    name: `stage-user-${randomBytes(3).toString('hex')}`,
    owner: 'local',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  return { dir, tokenFile, envFile, token };
}

test('a stage run as --stage-user cannot read the runner token, the env-file, the runner’s environment or another run’s checkout, cannot write the mirror, and leaves no daemon or temporary file', async () => {
  await world.start();
  const victim = await world.repo({
    'fluksio.yml': VICTIM_PIPELINE,
    '.gitignore': 'victim.txt\nresults/\n',
  });
  const attacker = await world.repo({
    'fluksio.yml': ATTACKER_PIPELINE,
    'attack.sh': ATTACK,
    'own.txt': 'readable\n',
    '.gitignore': 'out.txt\n',
  });
  await world.allow([victim.repository, attacker.repository]);
  const secret = `victim-${randomBytes(8).toString('hex')}`;
  const { dir, tokenFile, envFile, token } = await runnerFiles(secret);
  // The token is in the runner's environment too: /proc/<runner>/environ holds it.
  const runner = await startRunnerProcess({
    url: world.app.url,
    token,
    args: ['--stage-user', STAGE_USER, '--env-file', envFile, '--token-file', tokenFile],
  });
  world.runners.push(runner);
  await runner.waitFor(/runner started/);
  expect(runner.output()).toContain(`"stageUser":"${STAGE_USER} (uid ${stageUid})"`);

  // The victim's stage writes into a directory the engine made for its out: the stage user can.
  const trusted = await world.waitFor(
    await world.submit({ repository: victim.repository, cloneUrl: victim.cloneUrl, commit: victim.commit }),
  );
  expect(trusted.run.status, JSON.stringify(trusted)).toBe('succeeded');
  expect(trusted.sandbox).toBe(
    `stage user ${STAGE_USER} (uid ${stageUid}): the runner token, its secrets, mirrors and other runs ` +
      'unreadable to it; every process of the user killed when a stage ends',
  );
  const checkouts = join(runner.workDir, 'checkouts', '0');
  const [victimCheckout] = await readdir(checkouts);
  const victimDir = join(checkouts, victimCheckout ?? '');
  expect(await readFile(join(victimDir, 'victim.txt'), 'utf8')).toBe(`${secret}\n`);
  // Between runs the checkout is the runner's again.
  expect((await stat(victimDir)).uid).toBe(0);
  const [mirrorName] = await readdir(join(runner.workDir, 'mirrors'));
  const mirrorConfig = join(runner.workDir, 'mirrors', mirrorName ?? '', 'config');
  const configBefore = await readFile(mirrorConfig, 'utf8');

  const marker = 900_000_000 + Math.floor(Math.random() * 99_999_999);
  const attack = await world.waitFor(
    await world.submit({
      repository: attacker.repository,
      cloneUrl: attacker.cloneUrl,
      commit: attacker.commit,
      params: {
        token_file: tokenFile,
        env_file: envFile,
        runner_pid: runner.child.pid ?? 0,
        victim: victimDir,
        mirror: mirrorConfig,
        work_dir: runner.workDir,
        marker,
      },
    }),
  );
  expect(attack.run.status, JSON.stringify(attack)).toBe('succeeded');
  const got = await attempts(world, attack.run.id, 'attack');
  expect(got.uid).toBe(`${stageUid}\n`);
  expect(got.own).toBe('readable\n');
  expect(got.log).toContain('daemon=alive');
  expect(got.token).toBe('');
  expect(got.envfile).toBe('');
  expect(got.environ).toBe('');
  expect(got.workspace).toBe('');
  expect(got.listing).toBe('');
  expect(got.mirror).toBeUndefined();
  expect(got.log).not.toContain(token);
  expect(await readFile(mirrorConfig, 'utf8')).toBe(configBefore);
  expect(await sleeperAlive(marker)).toBe(false);
  expect(existsSync(`/tmp/fluksio-leftover-${marker}`)).toBe(false);
  expect(attack.sandbox).toMatch(new RegExp(`^stage user ${STAGE_USER} \\(uid ${stageUid}\\)`));

  // The next run fetches through the mirror the attacker aimed at: nothing runs.
  const again = await world.waitFor(
    await world.submit({
      repository: victim.repository,
      cloneUrl: victim.cloneUrl,
      commit: victim.commit,
      noCache: true,
    }),
  );
  expect(again.run.status, JSON.stringify(again)).toBe('succeeded');
  expect(existsSync(join(runner.workDir, 'pwned'))).toBe(false);

  const show = spawnFluksio(['show', attack.run.id, '--url', world.app.url], {
    cwd: dir,
    env: { FLUKSIO_TOKEN: world.apiToken },
  });
  expect(await show.exited, show.output()).toBe(0);
  expect(show.output()).toContain(`sandbox  stage user ${STAGE_USER} (uid ${stageUid})`);
}, 240_000);

test('--stage-user with --sandbox runs bubblewrap as the stage user', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': `version: 1
params:
  marker: { type: int, default: 0 }
stages:
  work:
    cmd: setsid sleep \${marker} >/dev/null 2>&1 </dev/null & id -u > out.txt
    params: [marker]
    outs: [out.txt]
`,
    '.gitignore': 'out.txt\n',
  });
  await world.allow([project.repository]);
  const runner = await world.runner('both', { args: ['--sandbox', '--stage-user', STAGE_USER] });
  await runner.waitFor(/runner started/);
  expect(runner.output()).toMatch(/"sandbox":"every run","bubblewrap":"bubblewrap \d/);

  const marker = 900_000_000 + Math.floor(Math.random() * 99_999_999);
  const run = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { marker },
    }),
  );
  expect(run.run.status, JSON.stringify(run)).toBe('succeeded');
  expect(run.sandbox).toMatch(
    new RegExp(
      `^bubblewrap \\d.*own user and PID namespaces.*; as stage user ${STAGE_USER} \\(uid ${stageUid}\\)$`,
    ),
  );
  const [checkout] = await readdir(join(runner.workDir, 'checkouts', '0'));
  expect(await readFile(join(runner.workDir, 'checkouts', '0', checkout ?? '', 'out.txt'), 'utf8')).toBe(
    `${stageUid}\n`,
  );
  expect(await sleeperAlive(marker)).toBe(false);
}, 180_000);

test('a --stage-user that cannot keep the stages away is refused at start, with the reason and the fix', async () => {
  await world.start();
  const refusal = async (args: string[], env: Record<string, string> = {}): Promise<string> => {
    const runner = await world.runner(`refused-${randomBytes(3).toString('hex')}`, { args, env });
    expect(await runner.exited, runner.output()).toBe(1);
    expect(runner.output()).not.toContain('runner started');
    return runner.output();
  };
  expect(await refusal(['--stage-user', 'root'])).toContain(
    '--stage-user root: it is root (uid 0); create a dedicated one: useradd --system --no-create-home',
  );
  expect(await refusal(['--stage-user', 'no-such-user-here'])).toContain(
    '--stage-user no-such-user-here: there is no such user on this machine; create a dedicated one',
  );
  expect(await refusal(['--stage-user', STAGE_USER, '--concurrency', '2'])).toContain(
    `--stage-user ${STAGE_USER}: one user runs one stage at a time; run it with --concurrency 1`,
  );
  // A token file others may read would be read by the stages.
  const { tokenFile } = await runnerFiles('unused');
  await chmod(tokenFile, 0o644);
  expect(await refusal(['--stage-user', STAGE_USER, '--token-file', tokenFile])).toContain(
    `--stage-user ${STAGE_USER}: it can read ${tokenFile}, which its stages must not; make it the runner's alone: chmod go-rwx ${tokenFile}`,
  );
  // A work directory below one closed to other users: the stages could not reach their checkout.
  const closed = await world.scratch();
  expect(await refusal(['--stage-user', STAGE_USER, '--work-dir', join(closed, 'work')])).toContain(
    `--stage-user ${STAGE_USER}: it cannot reach ${join(closed, 'work', 'checkouts', '0')}`,
  );
}, 180_000);
