import { expect, test } from 'vitest';
import { stageEnvironment } from '../../runner/stage-environment.js';
import { runStageProcess } from '../../runner/stage-process.js';

const SOURCE = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/ml',
  USER: 'ml',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  LC_NUMERIC: 'de_DE.UTF-8',
  TERM: 'xterm',
  CUDA_VISIBLE_DEVICES: '0,1',
  FLUKSIO_RUNNER_TOKEN: 'flk_runner_secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GITHUB_TOKEN: 'ghs_token',
  NOT_SET: undefined,
};

test('a stage gets the basics, the passed variables and the extras — nothing else of the runner', () => {
  expect(
    stageEnvironment({
      source: SOURCE,
      pass: ['CUDA_VISIBLE_DEVICES', 'WANDB_MODE', 'NOT_SET'],
      extra: { FLUKSIO_RUN_ID: '01J0RUN', FLUKSIO_STAGE: 'train' },
    }),
  ).toEqual({
    PATH: '/usr/bin:/bin',
    HOME: '/home/ml',
    USER: 'ml',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    LC_NUMERIC: 'de_DE.UTF-8',
    TERM: 'xterm',
    CUDA_VISIBLE_DEVICES: '0,1',
    FLUKSIO_RUN_ID: '01J0RUN',
    FLUKSIO_STAGE: 'train',
    PYTHONUNBUFFERED: '1',
  });
});

test('a pipeline cannot pass the runner its own token', () => {
  const env = stageEnvironment({ source: SOURCE, pass: ['FLUKSIO_RUNNER_TOKEN', 'GITHUB_TOKEN'], extra: {} });
  expect(env.FLUKSIO_RUNNER_TOKEN).toBeUndefined();
  expect(env.GITHUB_TOKEN).toBe('ghs_token');
});

test('extras win over passed variables, and PYTHONUNBUFFERED is always 1', () => {
  const env = stageEnvironment({
    source: { ...SOURCE, PYTHONUNBUFFERED: '0' },
    pass: ['CUDA_VISIBLE_DEVICES', 'PYTHONUNBUFFERED'],
    extra: { CUDA_VISIBLE_DEVICES: '3', PYTHONUNBUFFERED: '0' },
  });
  expect(env).toMatchObject({ CUDA_VISIBLE_DEVICES: '3', PYTHONUNBUFFERED: '1' });
});

test("a Python stage's output streams through the pipe line by line", async () => {
  const arrived: number[] = [];
  const started = performance.now();
  await runStageProcess({
    cmd: 'python3 -c \'import time; print("first"); time.sleep(1.5); print("second")\'',
    cwd: '/',
    env: stageEnvironment({ source: { PATH: '/usr/local/bin:/usr/bin:/bin' }, pass: [], extra: {} }),
    timeoutMs: null,
    onLine: () => arrived.push(performance.now() - started),
  });
  expect(arrived).toHaveLength(2);
  expect(arrived[1]! - arrived[0]!).toBeGreaterThan(1000);
});
