import { expect, test } from 'vitest';
import { loadProjectPipelineAsync } from '../../core/dvc/load-project-pipeline-async.js';
import { MAX_PIPELINE_FILE_BYTES } from '../../core/dvc/pipeline-file-limit.js';
import { makeRepo } from '../helpers/make-repo.js';
import { runCli } from '../helpers/run-cli.js';

/*
 * The GitHub App reads a pull request's pipeline file (`readPipelineAt`, through this very
 * loader) on every push to it, a fork's included, before anything is approved: a few bytes
 * of it must never cost the control plane more than a few bytes' work.
 */

/** The pipeline the App would read from `file` holding `text`, with no other file beside it. */
function load(file: 'fluksio.yml' | 'dvc.yaml', text: string) {
  return loadProjectPipelineAsync({ file, text, pipelineDir: '', readFile: async () => undefined });
}

/** A `dvc.yaml` whose one stage is a matrix of `lists` lists of `size` values each. */
function matrixOf(lists: number, size: number): string {
  const values = `[${Array.from({ length: size }, (_, index) => index).join(', ')}]`;
  const keys = Array.from({ length: lists }, (_, index) => `      k${index}: ${values}`).join('\n');
  return `stages:\n  s:\n    matrix:\n${keys}\n    cmd: echo \${item.k0}\n`;
}

test('a dvc.yaml matrix of a hundred million stages (eight lists of ten, 300 bytes) is refused, naming the count, before one is made', async () => {
  const { pipeline, problems } = await load('dvc.yaml', matrixOf(8, 10));
  expect(pipeline).toBeNull();
  expect(problems).toContainEqual(
    expect.objectContaining({
      path: 'stages.s',
      message: 'matrix makes 100,000,000 stages; a dvc.yaml makes at most 1,000 in all',
    }),
  );
});

test('a dvc.yaml makes at most 1,000 stages in all, plain, foreach and matrix ones together', async () => {
  expect((await load('dvc.yaml', matrixOf(2, 40))).problems).toContainEqual(
    expect.objectContaining({
      path: 'stages.s',
      message: expect.stringMatching(/^matrix makes 1,600 stages/),
    }),
  );
  const list = `[${Array.from({ length: 600 }, (_, index) => index).join(', ')}]`;
  const two = `stages:\n  a:\n    foreach: ${list}\n    do:\n      cmd: echo \${item}\n  b:\n    foreach: ${list}\n    do:\n      cmd: echo \${item}\n`;
  const { pipeline, problems } = await load('dvc.yaml', two);
  expect(pipeline).toBeNull();
  expect(problems).toContainEqual(
    expect.objectContaining({
      path: 'stages.b',
      message:
        'foreach makes 600 stages; a dvc.yaml makes at most 1,000 in all (400 left after the stages before it)',
    }),
  );
  // Up to the limit, a matrix is the stages DVC makes.
  const fine = await load('dvc.yaml', matrixOf(3, 10));
  expect(fine.problems).toEqual([]);
  expect(Object.keys(fine.pipeline?.stages ?? {})).toHaveLength(1000);
});

/** `count` names in a YAML flow list: `[o0, o1, …]`. */
function names(prefix: string, count: number): string {
  return `[${Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(', ')}]`;
}

// Each took minutes before (every key, and every out, compared with each before it), with
// the control plane's event loop held all along; they are a few seconds' work now.
test('a 250 KB fluksio.yml of 18,000 outs is checked whole, its overlapping outs one problem each', async () => {
  const text = `version: 1\nstages:\n  a: {cmd: x, outs: [data]}\n  b: {cmd: x, outs: ${names('data/o', 18_000)}}\n`;
  expect(text.length).toBeLessThanOrEqual(MAX_PIPELINE_FILE_BYTES);
  const { pipeline, problems } = await load('fluksio.yml', text);
  expect(pipeline).toBeNull();
  expect(problems).toHaveLength(18_000);
  expect(problems[0]).toMatchObject({
    path: 'stages.b.outs[0]',
    message: '"data/o0" overlaps "data", an output of stage a',
  });
});

test('a 250 KB fluksio.yml holding a map of 20,000 keys is parsed, and refused for what it is', async () => {
  const keys = Array.from({ length: 20_000 }, (_, index) => `  k${index}: 0`).join('\n');
  const { pipeline, problems } = await load('fluksio.yml', `version: 1\nflood:\n${keys}\nstages: {}\n`);
  expect(pipeline).toBeNull();
  expect(problems.map((problem) => problem.message).join('\n')).toMatch(/flood/);
});

test('a pipeline file, or a file read beside it, over 256 KiB is a problem naming its size, never parsed', async () => {
  const padding = `#${'x'.repeat(1022)}\n`.repeat(1024);
  const big = `version: 1\n${padding}stages:\n  a: {cmd: x}\n`;
  expect((await load('fluksio.yml', big)).problems).toEqual([
    {
      path: '',
      message:
        'the file is 1,048,609 bytes; a pipeline file, and each file read beside it, is at most 262,144 bytes (256 KiB)',
    },
  ]);
  const dvc = await load('dvc.yaml', `${padding}stages:\n  a:\n    cmd: x\n`);
  expect(dvc.pipeline).toBeNull();
  expect(dvc.problems.map((problem) => problem.message)).toEqual([
    expect.stringMatching(/^the file is 1,048,600 bytes; .* at most 262,144 bytes/),
  ]);
  // A multi-byte character counts as its UTF-8 bytes.
  const wide = `version: 1\n# ${'é'.repeat(MAX_PIPELINE_FILE_BYTES / 2)}\nstages:\n  a: {cmd: x}\n`;
  expect((await load('fluksio.yml', wide)).problems[0]?.message).toMatch(/^the file is 262,1\d\d bytes/);
  const params = await loadProjectPipelineAsync({
    file: 'dvc.yaml',
    text: 'stages:\n  a:\n    cmd: echo ${lr}\n',
    pipelineDir: '',
    readFile: async (name) => (name === 'params.yaml' ? `lr: 0.1\n${padding}` : undefined),
  });
  expect(params.pipeline).toBeNull();
  expect(params.problems.map((problem) => problem.message)).toEqual([
    expect.stringMatching(/^params\.yaml is 1,048,584 bytes; /),
  ]);
  // At the limit, a file is read as ever.
  const fits = `version: 1\nstages:\n  a: {cmd: x}\n`;
  const full = `${fits}#${'x'.repeat(MAX_PIPELINE_FILE_BYTES - fits.length - 2)}\n`;
  expect(full.length).toBe(MAX_PIPELINE_FILE_BYTES);
  expect((await load('fluksio.yml', full)).problems).toEqual([]);
});

test('`fluksio run` refuses a pipeline file over 256 KiB by the same rule, naming its size', async () => {
  const repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1\n${`#${'x'.repeat(1022)}\n`.repeat(300)}stages:\n  a: {cmd: echo hi}\n`,
    },
  });
  try {
    const result = await runCli(['run'], { cwd: repo.dir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('fluksio.yml: the file is 307,239 bytes; a pipeline file');
    expect(result.stderr).toContain('at most 262,144 bytes (256 KiB)');
  } finally {
    await repo.cleanup();
  }
});

test('a key written twice in a map is still refused, where it is written again', async () => {
  const text = 'version: 1\nstages:\n  a: {cmd: x}\n  b: {cmd: x, cmd: y}\n  a: {cmd: z}\n';
  const { problems } = await load('fluksio.yml', text);
  expect(problems).toEqual([
    expect.objectContaining({ message: 'YAML syntax error: Map keys must be unique', line: 4 }),
    expect.objectContaining({ message: 'YAML syntax error: Map keys must be unique', line: 5 }),
  ]);
  const dvc = await load('dvc.yaml', 'stages:\n  a:\n    cmd: x\n    cmd: y\n');
  expect(dvc.problems.map((problem) => problem.message)).toEqual([
    expect.stringContaining('Map keys must be unique'),
  ]);
});

test('a billion laughs (nine lines of YAML aliases) is a problem to show the author, not an error that fails the delivery', async () => {
  let anchors = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
  for (let level = 1; level < 9; level++) {
    anchors += `a${level}: &a${level} [${Array<string>(10)
      .fill(`*a${level - 1}`)
      .join(', ')}]\n`;
  }
  const expected = [
    expect.objectContaining({ message: expect.stringMatching(/^YAML aliases: .*expand to too many values/) }),
  ];
  expect((await load('fluksio.yml', `version: 1\n${anchors}stages: {}\n`)).problems).toEqual(expected);
  const vars = `vars:\n  - ${anchors.replace(/\n/g, '\n    ')}\nstages:\n  s:\n    cmd: echo \${a8}\n`;
  expect((await load('dvc.yaml', vars)).problems).toEqual(expected);
});
