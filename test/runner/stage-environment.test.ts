import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { keyedEnvironment, stageEnvironment } from '../../runner/sandbox/stage-environment.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';

const SOURCE = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/ml',
  USER: 'ml',
  LOGNAME: 'ml',
  SHELL: '/bin/zsh',
  LANG: 'de_DE.UTF-8',
  LANGUAGE: 'de',
  LC_ALL: 'de_DE.UTF-8',
  LC_NUMERIC: 'de_DE.UTF-8',
  TZ: 'Europe/Berlin',
  TMPDIR: '/var/tmp',
  TERM: 'xterm',
  CUDA_VISIBLE_DEVICES: '0,1',
  FLUKSIO_RUNNER_TOKEN: 'flk_runner_secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GITHUB_TOKEN: 'ghs_token',
  NOT_SET: undefined,
};
const privateDir = '/tmp/fluksio-run-x/train';

test('every variable a stage gets is keyed (PATH, the passed ones) or fixed, nothing else of the runner', () => {
  const env = stageEnvironment({
    source: SOURCE,
    pass: ['CUDA_VISIBLE_DEVICES', 'WANDB_MODE', 'NOT_SET'],
    extra: { FLUKSIO_RUN_ID: '01J0RUN', FLUKSIO_STAGE: 'train' },
    privateDir,
  });
  expect(env).toEqual({
    PATH: '/usr/bin:/bin',
    CUDA_VISIBLE_DEVICES: '0,1',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TZ: 'UTC',
    TERM: 'dumb',
    SHELL: '/bin/sh',
    HOME: `${privateDir}/home`,
    TMPDIR: `${privateDir}/tmp`,
    PYTHONPYCACHEPREFIX: `${privateDir}/pycache`,
    FLUKSIO_RUN_ID: '01J0RUN',
    FLUKSIO_STAGE: 'train',
    PYTHONUNBUFFERED: '1',
  });
  expect(keyedEnvironment(SOURCE, ['CUDA_VISIBLE_DEVICES', 'WANDB_MODE', 'NOT_SET'])).toEqual({
    PATH: '/usr/bin:/bin',
    CUDA_VISIBLE_DEVICES: '0,1',
    WANDB_MODE: null,
    NOT_SET: null,
  });
});

test('a fixed variable the pipeline passes gets its real value, and that value is keyed', () => {
  const env = stageEnvironment({ source: SOURCE, pass: ['HOME', 'TZ'], extra: {}, privateDir });
  expect(env).toMatchObject({ HOME: '/home/ml', TZ: 'Europe/Berlin', LANG: 'C.UTF-8' });
  expect(keyedEnvironment(SOURCE, ['HOME', 'TZ'])).toEqual({
    PATH: '/usr/bin:/bin',
    HOME: '/home/ml',
    TZ: 'Europe/Berlin',
  });
});

test('a pipeline cannot pass the runner its own token, nor move the bytecode folder', () => {
  const env = stageEnvironment({
    source: { ...SOURCE, PYTHONPYCACHEPREFIX: '/shared/pycache' },
    pass: ['FLUKSIO_RUNNER_TOKEN', 'GITHUB_TOKEN', 'PYTHONPYCACHEPREFIX'],
    extra: {},
    privateDir,
  });
  expect(env.FLUKSIO_RUNNER_TOKEN).toBeUndefined();
  expect(env.GITHUB_TOKEN).toBe('ghs_token');
  expect(env.PYTHONPYCACHEPREFIX).toBe(`${privateDir}/pycache`);
  expect(keyedEnvironment(SOURCE, ['FLUKSIO_RUNNER_TOKEN'])).toEqual({ PATH: '/usr/bin:/bin' });
});

test('extras win over passed variables, and PYTHONUNBUFFERED is always 1', () => {
  const env = stageEnvironment({
    source: { ...SOURCE, PYTHONUNBUFFERED: '0' },
    pass: ['CUDA_VISIBLE_DEVICES', 'PYTHONUNBUFFERED'],
    extra: { CUDA_VISIBLE_DEVICES: '3', PYTHONUNBUFFERED: '0' },
    privateDir,
  });
  expect(env).toMatchObject({ CUDA_VISIBLE_DEVICES: '3', PYTHONUNBUFFERED: '1' });
});

test("a Python stage's output streams through the pipe line by line", async () => {
  // The stage prints a line, then waits for the test to have read it: a line held back in
  // Python's buffer until the stage ends would arrive only after its wait ran out.
  const dir = await mkdtemp(path.join(tmpdir(), 'fluksio-stage-env-'));
  try {
    const go = path.join(dir, 'go');
    await writeFile(
      path.join(dir, 'stage.py'),
      [
        'import os, time',
        'print("first")',
        'deadline = time.time() + 30',
        `while not os.path.exists(${JSON.stringify(go)}) and time.time() < deadline:`,
        '    time.sleep(0.02)',
        `print("read" if os.path.exists(${JSON.stringify(go)}) else "not read within 30 s")`,
      ].join('\n'),
    );
    const lines: string[] = [];
    await runStageProcess({
      cmd: 'python3 stage.py',
      cwd: dir,
      env: stageEnvironment({
        source: { PATH: '/usr/local/bin:/usr/bin:/bin' },
        pass: [],
        extra: {},
        privateDir,
      }),
      timeoutMs: null,
      onLine: (_stream, line) => {
        lines.push(line);
        if (line === 'first') writeFileSync(go, '');
      },
    });
    expect(lines).toEqual(['first', 'read']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
