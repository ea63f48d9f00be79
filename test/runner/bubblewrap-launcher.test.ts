import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { BubblewrapLauncher } from '../../runner/sandbox/bubblewrap-launcher.js';
import { detectBubblewrap, type Bubblewrap } from '../../runner/sandbox/detect-bubblewrap.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { sleeperAlive } from '../helpers/sleeper-alive.js';

const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

let dir: string;
let workspace: string;
let bubblewrap: Bubblewrap;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-bwrap-'));
  workspace = path.join(dir, 'workspace');
  await mkdir(workspace);
  const detection = await detectBubblewrap(process.env);
  if (detection.bubblewrap === null) throw new Error(`these tests need bubblewrap: ${detection.reason}`);
  bubblewrap = detection.bubblewrap;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `cmd` sandboxed in the workspace; cancelled once it prints `cancelOn`. */
async function sandboxed(
  cmd: string,
  options: { hidden?: string[]; cancelOn?: string; killGraceMs?: number; writable?: string[] } = {},
) {
  const lines: string[] = [];
  const controller = new AbortController();
  const result = await runStageProcess({
    cmd,
    cwd: workspace,
    env: ENV,
    timeoutMs: null,
    signal: controller.signal,
    killGraceMs: options.killGraceMs ?? 5000,
    ...(options.writable ? { writable: options.writable } : {}),
    launcher: new BubblewrapLauncher({
      bwrap: bubblewrap.path,
      writable: [workspace],
      readOnly: [],
      hidden: options.hidden ?? [],
    }),
    onLine: (stream, line) => {
      lines.push(`${stream}: ${line}`);
      if (line === options.cancelOn) controller.abort();
    },
  });
  return { ...result, lines };
}

test('bubblewrap is found on the PATH and runs a trial sandbox; without it on the PATH, the reason says so', async () => {
  expect(bubblewrap.version).toMatch(/^bubblewrap \d+\.\d+/);
  expect(await detectBubblewrap({ PATH: dir })).toEqual({
    bubblewrap: null,
    reason: 'bwrap is not on the PATH (install Debian\'s "bubblewrap" package)',
  });
});

test('a daemon a sandboxed stage started with setsid is gone when the stage ends', async () => {
  const seconds = 800_000_000 + Math.floor(Math.random() * 99_999_999);
  const result = await sandboxed(
    `setsid sleep ${seconds} >/dev/null 2>&1 </dev/null & kill -0 $! && echo alive`,
  );
  expect(result).toMatchObject({ exitCode: 0, cancelled: false });
  expect(result.lines).toEqual(['stdout: alive']);
  expect(await sleeperAlive(seconds)).toBe(false);
});

test('the workspace is writable, the system is not, /tmp is private, hidden files and directories are unreadable or empty', async () => {
  const secretFile = path.join(dir, 'token');
  await writeFile(secretFile, 'runner-token\n');
  const secretDir = path.join(dir, 'mirrors');
  await mkdir(secretDir);
  await writeFile(path.join(secretDir, 'config'), '[core]\n');
  const privateFile = path.join(tmpdir(), `fluksio-private-${process.pid}-${Date.now()}`);
  const result = await sandboxed(
    [
      'echo made > made.txt && echo workspace-writable',
      'touch /usr/pwned 2>/dev/null || echo system-read-only',
      `echo private > ${privateFile}`,
      `echo token="$(cat ${secretFile} 2>/dev/null)"`,
      `echo mirrors="$(ls -A ${secretDir})"`,
      'echo processes="$(ls /proc | grep -c "^[0-9]")"',
    ].join('; '),
    { hidden: [secretFile, secretDir] },
  );
  expect(result.lines).toEqual([
    'stdout: workspace-writable',
    'stdout: system-read-only',
    'stdout: token=',
    'stdout: mirrors=',
    // bwrap's PID 1, the shell, and the command substitution's ls and grep.
    expect.stringMatching(/^stdout: processes=[2-5]$/),
  ]);
  expect(await readFile(path.join(workspace, 'made.txt'), 'utf8')).toBe('made\n');
  expect(existsSync(privateFile)).toBe(false);
  expect(await readFile(secretFile, 'utf8')).toBe('runner-token\n');
});

test('a cancelled sandboxed Python stage gets SIGINT first and can save its work', async () => {
  const script = [
    'import time',
    'try:',
    '    print("ready", flush=True)',
    '    time.sleep(300)',
    'except KeyboardInterrupt:',
    '    print("saved checkpoint", flush=True)',
  ].join('\n');
  const result = await sandboxed(`python3 -c '${script}'`, {
    cancelOn: 'ready',
    // Past any stall of a busy machine: this is about SIGINT, not about SIGTERM's deadline.
    killGraceMs: 600_000,
  });
  expect(result.lines).toEqual(['stdout: ready', 'stdout: saved checkpoint']);
  // bwrap passes on its shell's end by SIGINT as 128 + 2.
  expect(result).toMatchObject({ cancelled: true, exitCode: 130 });
});

test('a sandboxed stage that ignores SIGINT and SIGTERM still ends, with everything it started', async () => {
  const seconds = 800_000_000 + Math.floor(Math.random() * 99_999_999);
  const result = await sandboxed(`trap '' INT TERM; setsid sleep ${seconds} & echo ready; sleep 300`, {
    cancelOn: 'ready',
    killGraceMs: 200,
  });
  expect(result).toMatchObject({ cancelled: true, signal: 'SIGKILL' });
  expect(await sleeperAlive(seconds)).toBe(false);
});

test('a directory given for one stage (its read-trace reports) is writable in its sandbox; the rest of /tmp stays private', async () => {
  const reports = await mkdtemp(path.join(tmpdir(), 'fluksio-reports-'));
  try {
    await writeFile(path.join(dir, 'outside.txt'), 'host\n');
    const result = await sandboxed(
      `echo seen > ${reports}/r && (cat ${path.join(dir, 'outside.txt')} 2>/dev/null || echo private)`,
      { writable: [reports] },
    );
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.lines).toEqual(['stdout: private']);
    expect(await readFile(path.join(reports, 'r'), 'utf8')).toBe('seen\n');
  } finally {
    await rm(reports, { recursive: true, force: true });
  }
});
