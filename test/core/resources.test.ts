import { describe, expect, test } from 'vitest';
import { formatProblems } from '../../core/problem.js';
import { stageResources } from '../../schemas/resources.js';
import { validatePipeline } from '../../core/pipeline/validate-pipeline.js';

const context = { pipelineDir: '', exists: () => true };

const pipelineWith = (defaults: string, own: string) => `version: 1
${defaults}
stages:
  train:
    cmd: python3 train.py
${own}
`;

describe('resources', () => {
  test('pipeline-wide defaults and a stage’s own, read as MiB and milliseconds', () => {
    const { pipeline, problems } = validatePipeline(
      pipelineWith(
        'resources: {cpus: 8, memory: 32GiB, time: 4h, partition: gpu}',
        '    resources: {gpus: 1, memory: 1.5G}',
      ),
      context,
    );
    expect(problems).toEqual([]);
    expect(pipeline?.resources).toEqual({
      cpus: 8,
      memory: 32 * 1024,
      time: 4 * 3_600_000,
      partition: 'gpu',
    });
    expect(stageResources(pipeline?.resources, pipeline?.stages.train?.resources)).toEqual({
      gpus: 1,
      cpus: 8,
      memory: 1536,
      time: 4 * 3_600_000,
      partition: 'gpu',
    });
  });

  test('each bad field is named with where it is and what was expected', () => {
    const { pipeline, problems } = validatePipeline(
      pipelineWith(
        'resources: {cpus: 0, memory: 32GB, partition: "a b"}',
        '    resources: {gpus: 1.5, time: forever, nodes: 2}',
      ),
      context,
    );
    expect(pipeline).toBeNull();
    const text = formatProblems(problems, 'fluksio.yml');
    expect(text).toMatch(/resources\.cpus.*(≥|>=|at least|too small|1)/i);
    expect(text).toMatch(
      /resources\.memory: "32GB" is not a size: expected a number with a unit like 512MiB, 32GiB/,
    );
    expect(text).toMatch(/resources\.partition.*expected a partition name/);
    // 1.5 is there, of the wrong kind: never "missing".
    expect(text).toMatch(/stages\.train\.resources\.gpus: is a number, but must be a whole number/);
    expect(text).toMatch(/stages\.train\.resources\.time.*expected a duration/);
    expect(text).toMatch(/stages\.train\.resources.*nodes/);
  });
});
