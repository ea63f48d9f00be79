import { describe, expect, test } from 'vitest';
import { resolveTypedParams } from '../../core/params/resolve-params.js';
import { runEnvironment } from '../../runner/daemon/run-environment.js';
import type { ParamSpec } from '../../schemas/pipeline.js';

const specs: Record<string, ParamSpec> = {
  lr: { type: 'float', default: 0.01, min: 0 },
  epochs: { type: 'int', default: 3, min: 1 },
  model: { type: 'string', default: 'small', enum: ['small', 'large'] },
  fast: { type: 'bool', default: false },
};

describe('claimed params are checked again against the pipeline at the commit', () => {
  test('typed values within the declarations are kept, missing ones defaulted', () => {
    expect(resolveTypedParams(specs, { lr: 0.1, model: 'large', fast: true })).toEqual({
      params: { lr: 0.1, epochs: 3, model: 'large', fast: true },
      problems: [],
    });
  });

  test.each([
    [{ lr: '0.1' }, `Parameter 'lr': "0.1" is a string, but the pipeline declares it float`],
    [{ epochs: 2.5 }, `Parameter 'epochs': "2.5" is not an int (e.g. epochs=3)`],
    [{ epochs: 2 ** 60 }, `Parameter 'epochs': "1152921504606847000" is beyond ±9007199254740991`],
    [{ epochs: 0 }, `Parameter 'epochs': "0" is below the minimum 1`],
    [{ model: 'huge' }, `Parameter 'model': "huge" is not one of small, large`],
    [{ fast: 'yes' }, `Parameter 'fast': "yes" is a string, but the pipeline declares it bool`],
    [{ batch: 32 }, `Unknown parameter 'batch'; the pipeline declares: lr, epochs, model, fast`],
  ])('%j is refused: %s', (claimed, message) => {
    const result = resolveTypedParams(specs, claimed);
    expect(result.params).toBeNull();
    expect(result.problems.map((problem) => problem.message).join('\n')).toContain(message);
  });

  test('every problem is named at once', () => {
    expect(resolveTypedParams(specs, { lr: -1, model: 'huge', extra: 1 }).problems).toHaveLength(3);
  });

  test('a param without a default must be claimed', () => {
    const result = resolveTypedParams({ seed: { type: 'int' } }, {});
    expect(result.problems[0]?.message).toMatch(/Parameter 'seed' has no default/);
  });
});

describe('what a run’s stages may see', () => {
  const runner = {
    PATH: '/usr/bin',
    HOME: '/home/runner',
    CUDA_VISIBLE_DEVICES: '0',
    AWS_SECRET: 'aws',
    FLUKSIO_RUNNER_TOKEN: 'tok',
  };
  const secrets = { HF_TOKEN: 'hf-secret' };

  test('a trusted run reads the runner environment (FLUKSIO_* excepted) and gets the secrets', () => {
    const { environment, secrets: given } = runEnvironment({
      fork: false,
      runnerEnvironment: runner,
      secrets,
    });
    expect(environment).toMatchObject({ CUDA_VISIBLE_DEVICES: '0', PATH: '/usr/bin' });
    expect(environment).not.toHaveProperty('FLUKSIO_RUNNER_TOKEN');
    expect(given).toEqual(secrets);
  });

  test('a fork’s run inherits only PATH (the rest of its stages’ environment is fixed): no runner variable, no secret', () => {
    const { environment, secrets: given } = runEnvironment({
      fork: true,
      runnerEnvironment: runner,
      secrets,
    });
    expect(environment).toEqual({ PATH: '/usr/bin' });
    expect(environment).not.toHaveProperty('CUDA_VISIBLE_DEVICES');
    expect(environment).not.toHaveProperty('AWS_SECRET');
    expect(environment).not.toHaveProperty('FLUKSIO_RUNNER_TOKEN');
    expect(given).toEqual({});
  });
});
