import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { sha256Hex } from '../../core/canonical-json.js';
import { fingerprintOf } from '../../runner/keys/fingerprint.js';
import { directLauncher } from '../../runner/sandbox/stage-launcher.js';
import { StageUserLauncher } from '../../runner/sandbox/stage-user-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { stageTestUser, type StageTestUser } from '../helpers/stage-test-user.js';
import { sleeperAlive } from '../helpers/sleeper-alive.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

let stageUser: StageTestUser;
let dir: string;
let checkout: string;
beforeAll(() => {
  stageUser = stageTestUser('fluksio-stage-unit');
});
afterAll(() => {
  stageUser.remove();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-stage-user-'));
  // Open to others, so that the files' own modes are what keeps the stage user out.
  await chmod(dir, 0o755);
  checkout = path.join(dir, 'checkout');
  await mkdir(checkout);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function launcher(): StageUserLauncher {
  return new StageUserLauncher({ user: stageUser.user, checkout, inner: directLauncher });
}

/** Runs `cmd` as the stage user in the checkout; cancelled once it prints `cancelOn`. */
async function asStageUser(cmd: string, options: { cancelOn?: string; killGraceMs?: number } = {}) {
  const lines: string[] = [];
  const controller = new AbortController();
  const result = await runStageProcess({
    cmd,
    cwd: checkout,
    env: ENV,
    timeoutMs: null,
    signal: controller.signal,
    killGraceMs: options.killGraceMs ?? 5000,
    launcher: launcher(),
    onLine: (stream, line) => {
      lines.push(`${stream}: ${line}`);
      if (line === options.cancelOn) controller.abort();
    },
  });
  return { ...result, lines };
}

test('a stage runs as the stage user and may write what the engine made in its checkout, and nothing of the engine’s elsewhere', async () => {
  // Made by the engine (root) before the stage: an out's directory and a restored out.
  await mkdir(path.join(checkout, 'results'), { mode: 0o755 });
  await writeFile(path.join(checkout, 'results', 'cached.txt'), 'restored\n', { mode: 0o644 });
  const secret = path.join(dir, 'secret.txt');
  await writeFile(secret, 'secret\n', { mode: 0o600 });
  const result = await asStageUser(
    `id -u; echo new > results/new.txt && echo changed > results/cached.txt && echo wrote; cat ${secret} || echo refused`,
  );
  expect(result.exitCode).toBe(0);
  expect(result.lines).toContain(`stdout: ${stageUser.user.uid}`);
  expect(result.lines).toContain('stdout: wrote');
  expect(result.lines).toContain('stdout: refused');
  expect(result.lines.join('\n')).not.toContain('stdout: secret');
  expect(await readFile(path.join(checkout, 'results', 'cached.txt'), 'utf8')).toBe('changed\n');
  expect((await stat(path.join(checkout, 'results', 'new.txt'))).uid).toBe(stageUser.user.uid);
  expect((await stat(secret)).uid).toBe(0);
});

test('a daemon the stage started with setsid is gone when the stage ends', async () => {
  const seconds = 800_000_000 + Math.floor(Math.random() * 99_999_999);
  const result = await asStageUser(
    `setsid sleep ${seconds} >/dev/null 2>&1 </dev/null & kill -0 $! && echo alive`,
  );
  expect(result).toMatchObject({ exitCode: 0, cancelled: false });
  expect(result.lines).toEqual(['stdout: alive']);
  expect(await sleeperAlive(seconds)).toBe(false);
});

test('a cancelled stage gets SIGINT first', async () => {
  const result = await asStageUser(
    "trap 'echo interrupted; exit 3' INT; echo ready; while :; do sleep 0.05; done",
    // Past any stall of a busy machine: this is about SIGINT, not about SIGTERM's deadline.
    { cancelOn: 'ready', killGraceMs: 600_000 },
  );
  expect(result).toMatchObject({ cancelled: true, exitCode: 3 });
  expect(result.lines).toEqual(['stdout: ready', 'stdout: interrupted']);
});

test('the fingerprint command runs as the stage user too', async () => {
  const digest = await fingerprintOf('id -u', checkout, ENV, launcher());
  expect(digest).toBe(sha256Hex(Buffer.from(`${stageUser.user.uid}\n`)));
});
