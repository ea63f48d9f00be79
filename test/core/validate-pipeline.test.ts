import { describe, expect, test } from 'vitest';
import { formatProblems } from '../../core/problem.js';
import { validatePipeline, type ParsedPipelineText } from '../../core/pipeline/validate-pipeline.js';

const VALID = `version: 1
params:
  lr: { type: float, default: 0.01, min: 0 }
  epochs: { type: int, default: 3, min: 1 }
  seed: { type: int, default: 0 }
env: [CUDA_VISIBLE_DEVICES]
fingerprint: python3 -VV
timeout: 6h
metrics:
  loss: { goal: min }
stages:
  prepare:
    cmd: python3 prepare.py --seed \${seed}
    deps: [prepare.py]
    params: [seed]
    outs: [data/clean.csv]
    code: false
  train:
    cmd: python3 train.py --lr \${lr} --epochs \${epochs}
    deps: [train.py, data/clean.csv]
    params: [lr, epochs, seed]
    outs: [model.json]
    metrics: [metrics/train.json]
    timeout: 2h
  evaluate:
    cmd: python3 evaluate.py
    deps: [evaluate.py, model.json]
    metrics: [metrics/eval.json]
    cache: false
`;

const files = new Set(['prepare.py', 'train.py', 'evaluate.py', 'sub/fluksio.yml', 'shared/lib.py']);
const context = { pipelineDir: '', exists: (path: string) => files.has(path) };

function problemsOf(text: string, pipelineDir = '') {
  const result = validatePipeline(text, { ...context, pipelineDir });
  expect(result.pipeline).toBeNull();
  return result.problems;
}

describe('validatePipeline', () => {
  test('a valid pipeline comes back with its defaults filled in', () => {
    const { pipeline, problems } = validatePipeline(VALID, context);
    expect(problems).toEqual([]);
    expect(pipeline?.stages.train?.timeout).toBe(2 * 3_600_000);
    expect(pipeline?.timeout).toBe(6 * 3_600_000);
    expect(pipeline?.retries).toBe(0);
    expect(pipeline?.stages.evaluate?.cache).toBe(false);
    expect(pipeline?.stages.prepare?.code).toBe(false);
    expect(pipeline?.stages.evaluate?.params).toEqual([]);
  });

  test('a stage or param named with an accented letter is refused saying only ASCII letters are', () => {
    const text = VALID.replace('  evaluate:', '  évaluer:').replace('  seed:', '  graine_é:');
    expect(formatProblems(problemsOf(text), 'fluksio.yml').split('\n')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/stages\.évaluer: "évaluer" is not a valid name: expected .*ASCII letters/),
        expect.stringMatching(/params\.graine_é: "graine_é" is not a valid name: expected .*ASCII letters/),
      ]),
    );
  });

  test.each([
    ['a stage', '    cmnd: x\n', 'stages.evaluate', 'unknown key "cmnd" (did you mean "cmd"?)'],
    ['a stage', '    out: [x]\n', 'stages.evaluate', 'unknown key "out" (did you mean "outs"?)'],
    ['a stage', '    metric: [x]\n', 'stages.evaluate', 'unknown key "metric" (did you mean "metrics"?)'],
    ['a stage', '    gpus: 2\n', 'stages.evaluate', 'unknown key "gpus"'],
    ['the pipeline', 'stage:\n  x: {cmd: y}\n', '', 'unknown key "stage" (did you mean "stages"?)'],
  ])('a misspelt key of %s is named with the key it likely means: %j', (_, added, path, message) => {
    const text =
      path === '' ? VALID + added : VALID.replace('    cache: false\n', `    cache: false\n${added}`);
    expect(problemsOf(text).find((problem) => problem.path === path)?.message).toBe(message);
  });

  test('a NUL or an unpaired surrogate anywhere is refused with its path, not stored altered', () => {
    // PostgreSQL stores neither: altered to U+FFFD on the way in, the run's digests would
    // differ between the runner and the control plane, and its start would be refused forever.
    const text = VALID.replace('default: 0 }', 'default: 0, description: "a\\0b" }').replace(
      'python3 evaluate.py',
      '"python3 evaluate.py \\uD800"',
    );
    const problems = problemsOf(text);
    expect(problems.map(({ path, line }) => ({ path, line }))).toEqual([
      { path: 'params.seed.description', line: 5 },
      { path: 'stages.evaluate.cmd', line: 26 },
    ]);
    expect(problems[0]?.message).toMatch(/NUL character .* cannot store: remove it/);
  });

  test('a YAML syntax error is named with its line', () => {
    const problems = problemsOf('version: 1\nstages:\n  train: { cmd: "x"\n');
    expect(problems[0]?.message).toMatch(/^YAML syntax error/);
    expect(problems[0]?.line).toBeGreaterThan(0);
  });

  test('every schema problem is reported at once with its path and line', () => {
    const text = VALID.replace(
      'epochs: { type: int, default: 3, min: 1 }',
      'epochs: { type: integer, default: 3 }',
    )
      .replace('    code: false\n', '    code: false\n    dep: [x]\n')
      .replace('timeout: 6h', 'timeout: soon');
    const problems = problemsOf(text);
    const paths = problems.map((problem) => problem.path);
    expect(paths).toEqual(expect.arrayContaining(['params.epochs.type', 'stages.prepare', 'timeout']));
    expect(problems.find((p) => p.path === 'stages.prepare')?.message).toBe(
      'unknown key "dep" (did you mean "deps"?)',
    );
    expect(problems.find((p) => p.path === 'timeout')?.message).toMatch(/duration like "90s"/);
    expect(problems.find((p) => p.path === 'timeout')?.line).toBe(8);
  });

  test.each([
    [
      'a cycle is named stage by stage',
      VALID.replace('deps: [prepare.py]', 'deps: [prepare.py, model.json]'),
      'stages.',
      /cycle: (prepare → train → prepare|train → prepare → train)/,
    ],
    [
      'an unknown param in a stage',
      VALID.replace('params: [lr, epochs, seed]', 'params: [lr, epochs, seeed]'),
      'stages.train.params[2]',
      /unknown param "seeed"; the pipeline declares: lr, epochs, seed/,
    ],
    [
      'an interpolated param the stage does not list',
      VALID.replace('params: [lr, epochs, seed]', 'params: [lr, seed]'),
      'stages.train.cmd',
      /\$\{epochs\} is used but not listed/,
    ],
    [
      'an interpolated name that is no param',
      VALID.replace('--seed ${seed}', '--seed ${sed}'),
      'stages.prepare.cmd',
      /\$\{sed\} is not a declared param/,
    ],
    [
      'a dep that is neither in the repository nor an out',
      VALID.replace('deps: [evaluate.py, model.json]', 'deps: [evaluate.py, model.bin]'),
      'stages.evaluate.deps[1]',
      /"model.bin" is neither in the repository nor an output of any stage/,
    ],
    [
      'a duplicate out',
      VALID.replace('outs: [model.json]', 'outs: [data/clean.csv]'),
      'stages.train.outs[0]',
      /already an output of stage prepare/,
    ],
    [
      'an out outside the repository',
      VALID.replace('outs: [model.json]', 'outs: [../x]'),
      'stages.train.outs[0]',
      /"..\/x" is outside the repository/,
    ],
    [
      'an out inside .git',
      VALID.replace('outs: [model.json]', 'outs: [.git/hooks/pre-commit]'),
      'stages.train.outs[0]',
      /inside \.git\//,
    ],
    [
      'an absolute path',
      VALID.replace('outs: [model.json]', 'outs: [/etc/passwd]'),
      'stages.train.outs[0]',
      /relative to the pipeline file/,
    ],
    [
      'a default outside its bounds',
      VALID.replace('default: 0.01, min: 0', 'default: -1, min: 0'),
      'params.lr.default',
      /-1 is below min 0/,
    ],
    [
      'an integer beyond 2^53',
      VALID.replace('seed: { type: int, default: 0 }', 'seed: { type: int, default: 9007199254740993 }'),
      'params.seed.default',
      /2\^53/,
    ],
    [
      'a FLUKSIO_ variable in env',
      VALID.replace('env: [CUDA_VISIBLE_DEVICES]', 'env: [CUDA_VISIBLE_DEVICES, FLUKSIO_RUNNER_TOKEN]'),
      'env[1]',
      /reserved/,
    ],
    ['a bad stage name', VALID.replace('  evaluate:', '  "eval uate":'), 'stages.eval uate', /identifier/],
  ])('%s', (_name, text, path, message) => {
    const problems = problemsOf(text);
    const problem = problems.find((p) => p.path.startsWith(path));
    expect(problem, formatProblems(problems)).toBeDefined();
    expect(problem?.message).toMatch(message);
  });

  test('paths in a pipeline in a subdirectory may reach the rest of the repository but not leave it', () => {
    const text = `version: 1\nstages:\n  a:\n    cmd: "true"\n    deps: [../shared/lib.py]\n    outs: [../../out.txt]\n`;
    const problems = problemsOf(text, 'sub');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ path: 'stages.a.outs[0]', line: 6 });
  });

  test.each([
    ['version: 1\n', 'stages', 'is missing: write a mapping (name: value, one per line) here'],
    [
      'version: 1\nstages: [a, b]\n',
      'stages',
      'is a list ([a, b] or "- a" lines), but must be a mapping (name: value, one per line)',
    ],
    ['version: 1\nstages:\n  a:\n    cmd: 3\n', 'stages.a.cmd', 'is a number, but must be a string'],
    [
      'version: 1\nstages:\n  a:\n    cmd: "true"\n    deps: x.py\n',
      'stages.a.deps',
      'is a string, but must be a list ([a, b] or "- a" lines)',
    ],
  ])('a wrong or missing value reads as a sentence: %j', (text, path, message) => {
    const problems = problemsOf(text);
    expect(problems.find((p) => p.path === path)?.message, formatProblems(problems)).toBe(message);
    for (const problem of problems) expect(problem.message).not.toMatch(/\(expected \w+\)|Invalid input/);
  });

  test('formatted problems read file:line: path: message', () => {
    const problems = problemsOf(VALID.replace('outs: [model.json]', 'outs: [../x]'));
    expect(formatProblems(problems, 'fluksio.yml')).toMatch(/^fluksio\.yml:\d+: stages\.train\.outs\[0\]: /);
  });
});

describe('a text checked again with the parses of the first check', () => {
  test('is not parsed again, and its rules see the repository as it is now', () => {
    const parses = new Map<string, ParsedPipelineText>();
    expect(validatePipeline(VALID, context, parses).problems).toEqual([]);
    expect([...parses.keys()]).toEqual([VALID]);
    const withoutTrain = {
      pipelineDir: '',
      exists: (path: string) => path !== 'train.py' && files.has(path),
    };
    const again = validatePipeline(VALID, withoutTrain, parses);
    expect(again.pipeline).toBeNull();
    expect(formatProblems(again.problems)).toMatch(/train\.py/);
    expect(parses.size).toBe(1);
  });

  test('an edited text is parsed anew, and its problems are its own', () => {
    const parses = new Map<string, ParsedPipelineText>();
    validatePipeline(VALID, context, parses);
    const broken = validatePipeline(VALID.replace('version: 1', 'version: 2'), context, parses);
    expect(broken.pipeline).toBeNull();
    expect(formatProblems(broken.problems)).toMatch(/version/);
    expect(parses.size).toBe(2);
  });
});
