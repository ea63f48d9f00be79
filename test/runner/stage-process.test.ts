import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runStageProcess, type StageProcessOptions } from '../../runner/sandbox/stage-process.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-stage-process-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

/**
 * Runs a command in the test's directory, collecting its lines; with `cancelOn`, it is
 * cancelled once it prints that line.
 */
async function run(cmd: string, options: Partial<StageProcessOptions> & { cancelOn?: string } = {}) {
  const { cancelOn, ...rest } = options;
  const lines: string[] = [];
  const controller = new AbortController();
  const result = await runStageProcess({
    cmd,
    cwd: dir,
    env: ENV,
    timeoutMs: null,
    ...(cancelOn !== undefined ? { signal: controller.signal } : {}),
    onLine: (stream, line) => {
      lines.push(`${stream}: ${line}`);
      if (line === cancelOn) controller.abort();
    },
    ...rest,
  });
  return { ...result, lines };
}

function groupExists(pid: number | null): boolean {
  expect(pid).not.toBeNull();
  try {
    process.kill(-pid!, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}

describe('runStageProcess', () => {
  test('lines from stdout and stderr arrive whole, and the exit code comes back', async () => {
    const result = await run(
      "echo out; printf 'err' >&2; sleep 0.1; printf 'or\\n' >&2; printf 'last'; exit 3",
    );
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false });
    expect(result.lines).toEqual(['stdout: out', 'stderr: error', 'stdout: last']);
  });

  test('the command sees only the environment it is given, and no stdin', async () => {
    process.env.FLUKSIO_TEST_TOKEN = 'leak';
    try {
      const result = await run(
        'echo "token=${FLUKSIO_TEST_TOKEN:-unset} path=$PATH"; cat; echo "stdin closed"',
        {
          env: { ...ENV, FLUKSIO_STAGE: 'train' },
        },
      );
      expect(result.lines).toEqual([`stdout: token=unset path=${ENV.PATH}`, 'stdout: stdin closed']);
    } finally {
      delete process.env.FLUKSIO_TEST_TOKEN;
    }
  });

  test('cancelling stops the command and everything it started: the process group is gone', async () => {
    const result = await run('sleep 300 & echo ready; sleep 300', { cancelOn: 'ready' });
    expect(result).toMatchObject({ cancelled: true, timedOut: false, exitCode: null });
    expect(groupExists(result.pid)).toBe(false);
    expect(result.durationMs).toBeLessThan(10_000);
  });

  test('a timeout stops the whole group and says timedOut', async () => {
    const result = await run('sleep 300 & sleep 300', { timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: 'SIGINT' });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
    expect(groupExists(result.pid)).toBe(false);
  });

  test.each([
    { ignores: 'INT', endedBy: 'SIGTERM', after: 200 },
    { ignores: 'INT TERM', endedBy: 'SIGKILL', after: 400 },
  ])('a stage that ignores SIG$ignores still ends, by $endedBy', async ({ ignores, endedBy, after }) => {
    const result = await run(`trap '' ${ignores}; echo ready; sleep 300 & sleep 300`, {
      cancelOn: 'ready',
      killGraceMs: 200,
    });
    expect(result).toMatchObject({ cancelled: true, signal: endedBy });
    expect(result.durationMs).toBeGreaterThanOrEqual(after);
    expect(groupExists(result.pid)).toBe(false);
  });

  test('SIGINT comes first, so a Python stage can save its work', async () => {
    const script = [
      'import time',
      'try:',
      '    print("ready", flush=True)',
      '    time.sleep(300)',
      'except KeyboardInterrupt:',
      '    print("saved checkpoint", flush=True)',
    ].join('\n');
    const result = await run(`python3 -c '${script}'`, {
      cancelOn: 'ready',
      // Past any stall of a busy machine: this is about SIGINT, not about SIGTERM's deadline.
      killGraceMs: 600_000,
    });
    expect(result.lines).toEqual(['stdout: ready', 'stdout: saved checkpoint']);
    expect(result).toMatchObject({ cancelled: true, signal: 'SIGINT' });
  });

  test('a background process holding the pipes open does not hang a finished stage', async () => {
    // No grace period runs out during the test: the pipes close because the group was killed.
    const result = await run('sleep 300 & echo done', { killGraceMs: 600_000 });
    expect(result).toMatchObject({ exitCode: 0, cancelled: false, timedOut: false });
    expect(result.lines).toEqual(['stdout: done']);
    expect(result.durationMs).toBeLessThan(30_000);
    expect(groupExists(result.pid)).toBe(false);
  });

  test('a process that escaped the group cannot keep the stage running past the grace period', async () => {
    const pidFile = path.join(dir, 'escaped.pid');
    // The shell ends only once the sleeper has left the group (it writes its pid after
    // setsid): a sleeper slow to start would otherwise die with the group, escaping nothing.
    const result = await run(
      `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' & until [ -s ${pidFile} ]; do sleep 0.05; done; echo done`,
      { killGraceMs: 300 },
    );
    const escaped = Number(await readFile(pidFile, 'utf8'));
    // Still holding the pipes when the stage ended: the grace period ended it, not the sleeper.
    const stillAlive = groupExists(escaped);
    process.kill(escaped, 'SIGKILL');
    expect(stillAlive).toBe(true);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.lines).toEqual(['stdout: done']);
  });

  test('a command that cannot start rejects, naming the directory and the command', async () => {
    const missing = path.join(dir, 'no-such-dir');
    await expect(run('python3 train.py', { cwd: missing })).rejects.toThrow(
      `Could not start the stage command "python3 train.py" in ${missing}: the directory ${missing} does not exist`,
    );
  });

  test('a command cancelled before it starts never runs', async () => {
    const marker = path.join(dir, 'ran');
    const result = await run(`touch ${marker}`, { signal: AbortSignal.abort() });
    expect(result).toEqual({
      exitCode: null,
      signal: null,
      timedOut: false,
      cancelled: true,
      durationMs: 0,
      pid: null,
      lines: [],
    });
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });
});
