import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { committedFiles } from '../helpers/committed-files.js';
import { runFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { hasColor, runInTerminal, widestLine } from '../helpers/terminal-process.js';

/** examples/dvc-get-started as committed: prepare → featurize → train, evaluate after both. */
let example: TestRepo;
/** top → left, right@1 → bottom, declared bottom first. */
let diamond: TestRepo;
beforeAll(async () => {
  [example, diamond] = await Promise.all([
    makeRepo({ files: committedFiles(join(import.meta.dirname, '../../examples/dvc-get-started')) }),
    makeRepo({
      files: {
        '.gitignore': '/out/\n',
        'fluksio.yml': [
          'version: 1',
          'stages:',
          '  bottom: { cmd: "cat out/l out/r > out/b", deps: [out/l, out/r], outs: [out/b] }',
          '  left: { cmd: "cat out/t > out/l", deps: [out/t], outs: [out/l] }',
          '  right: { cmd: "cat out/t > out/r", deps: [out/t], outs: [out/r] }',
          '  top: { cmd: "mkdir -p out && echo t > out/t", outs: [out/t] }',
          '',
        ].join('\n'),
      },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([example.cleanup(), diamond.cleanup()]);
});

test('fluksio dag draws the example in layers, as Mermaid (fenced with --md) and as JSON', async () => {
  const text = await runFluksio(['dag'], { cwd: example.dir });
  expect(text.code).toBe(0);
  expect(text.stdout.split('\n').slice(0, 6)).toEqual([
    'dvc.yaml  4 stages, 4 edges',
    'layer  stage      needs             makes',
    '1      prepare    –                 data/prepared',
    '2      featurize  prepare           data/features',
    '3      train      featurize         model.json',
    '4      evaluate   featurize, train  eval/plots/roc.json, eval/plots/prc.json, eval/metrics.json',
  ]);
  const mermaid = await runFluksio(['dag', '--mermaid'], { cwd: example.dir });
  expect(mermaid.stdout).toBe(
    'flowchart TD\n  s0["prepare"]\n  s1["featurize"]\n  s2["train"]\n  s3["evaluate"]\n  s0 --> s1\n  s1 --> s2\n  s1 --> s3\n  s2 --> s3\n',
  );
  const md = await runFluksio(['dag', '--md'], { cwd: example.dir });
  expect(md.stdout).toBe(`\`\`\`mermaid\n${mermaid.stdout}\`\`\`\n`);
  const json = JSON.parse((await runFluksio(['dag', '--json'], { cwd: example.dir })).stdout) as {
    nodes: { name: string; layer: number }[];
    edges: { from: string; to: string; paths: string[] }[];
  };
  expect(json.nodes.map((node) => node.layer)).toEqual([1, 2, 3, 4]);
  expect(json.edges).toContainEqual({ from: 'featurize', to: 'evaluate', paths: ['data/features'] });
});

test('fluksio dag on a diamond puts both sides in one layer, whatever the order they are declared in', async () => {
  const text = await runFluksio(['dag'], { cwd: diamond.dir });
  expect(text.stdout).toMatch(/^1 +top +– +out\/t$/m);
  expect(text.stdout).toMatch(/^2 +left +top +out\/l$/m);
  expect(text.stdout).toMatch(/^2 +right +top +out\/r$/m);
  expect(text.stdout).toMatch(/^3 +bottom +left, right +out\/b$/m);
  const mermaid = await runFluksio(['dag', '--mermaid'], { cwd: diamond.dir });
  expect(mermaid.stdout).toContain('  s1 --> s0\n  s2 --> s0\n  s3 --> s1\n  s3 --> s2\n');
  const json = JSON.parse((await runFluksio(['dag', '--json'], { cwd: diamond.dir })).stdout) as {
    edges: unknown[];
  };
  expect(json.edges).toHaveLength(4);
});

test.each([
  { command: ['dag'], expected: /evaluate +featurize,/ },
  { command: ['status'], expected: /featurize +run +no earlier run of this stage/ },
])(
  'fluksio $command fits 70 columns on a terminal, in colour unless NO_COLOR',
  async ({ command, expected }) => {
    for (const env of [{}, { NO_COLOR: '1' }]) {
      const terminal = runInTerminal(command, { cwd: example.dir, columns: 70, env });
      expect(await terminal.exited).toBe(0);
      const output = terminal.output();
      expect(widestLine(output), output).toBeLessThanOrEqual(70);
      expect(hasColor(output), output).toBe(!('NO_COLOR' in env));
      // eslint-disable-next-line no-control-regex
      expect(output.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(expected);
    }
    const piped = await runFluksio(command, { cwd: example.dir, env: { NO_COLOR: undefined } });
    expect(hasColor(piped.stdout)).toBe(false);
  },
  120_000,
);

test("a DVC stage's desc is shown by dag (text and --json) and status (text and --json)", async () => {
  const described = await makeRepo({
    files: {
      '.gitignore': '/out/\n',
      'dvc.yaml': [
        'stages:',
        '  fetch:',
        '    desc: Downloads the raw corpus',
        '    cmd: mkdir -p out && echo raw > out/raw.txt',
        '    outs: [out/raw.txt]',
        '  count:',
        '    cmd: wc -l out/raw.txt > out/count.txt',
        '    deps: [out/raw.txt]',
        '    outs: [out/count.txt]',
        '',
      ].join('\n'),
    },
  });
  try {
    const dag = await runFluksio(['dag'], { cwd: described.dir });
    expect(dag.code, dag.stderr).toBe(0);
    expect(dag.stdout).toMatch(/^layer +stage +needs +makes +description$/m);
    expect(dag.stdout).toMatch(/^1 +fetch +– +out\/raw\.txt +Downloads the raw corpus$/m);
    expect(dag.stdout).toMatch(/^2 +count +fetch +out\/count\.txt +–$/m);
    const dagJson = JSON.parse((await runFluksio(['dag', '--json'], { cwd: described.dir })).stdout) as {
      nodes: { name: string; description: string | null }[];
    };
    expect(dagJson.nodes.map(({ name, description }) => [name, description])).toEqual([
      ['fetch', 'Downloads the raw corpus'],
      ['count', null],
    ]);

    const status = await runFluksio(['status'], { cwd: described.dir });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^fetch +run +no earlier run of this stage +Downloads the raw corpus$/m);
    const statusJson = JSON.parse(
      (await runFluksio(['status', '--json'], { cwd: described.dir })).stdout,
    ) as {
      stages: { name: string; description: string | null }[];
    };
    expect(statusJson.stages.map(({ name, description }) => [name, description])).toEqual([
      ['fetch', 'Downloads the raw corpus'],
      ['count', null],
    ]);
  } finally {
    await described.cleanup();
  }
});
