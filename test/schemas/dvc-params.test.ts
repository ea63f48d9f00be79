import { expect, test } from 'vitest';
import { parseAssignmentArgs } from '../../core/params/param-assignments.js';
import { resolveParams } from '../../core/params/resolve-params.js';
import { translateDvc } from '../../core/dvc/translate-dvc.js';

const dvcYaml = `stages:\n  s:\n    cmd: python3 t.py \${featurize.max_features} \${featurize.ngrams}\n    params: [featurize, {custom.yaml: [lr]}]\n`;
const files: Record<string, string> = {
  'params.yaml': 'featurize:\n  max_features: 100\n  ngrams: 1\n',
  'custom.yaml': 'lr: 0.5\n',
};

test('params as DVC names them are set and swept with the same grammar, typed from the params file', () => {
  const { pipeline } = translateDvc({ dvcYaml, pipelineDir: '', readFile: (path) => files[path] });
  const parsed = parseAssignmentArgs(['featurize.max_features=200,400', 'custom.yaml:lr=0.5']);
  expect(parsed.problems).toEqual([]);
  const { grid, problems } = resolveParams(pipeline?.params ?? {}, parsed.assignments);
  expect(problems).toEqual([]);
  expect(grid).toEqual([
    { 'featurize.max_features': 200, 'featurize.ngrams': 1, 'custom.yaml:lr': 0.5 },
    { 'featurize.max_features': 400, 'featurize.ngrams': 1, 'custom.yaml:lr': 0.5 },
  ]);
  // lr reaches the stage only through custom.yaml, which fluksio never rewrites: another
  // value would be recorded as the run's but not used, so it is refused, saying why.
  const unseen = resolveParams(
    pipeline?.params ?? {},
    parseAssignmentArgs(['custom.yaml:lr=0.1']).assignments,
  );
  expect(unseen.problems.map((problem) => problem.message)).toEqual([
    `Parameter 'custom.yaml:lr': "0.1" is not one of 0.5 (its stage reads it from the params file, which fluksio does not rewrite: change it there, or pass it in cmd as \${custom.yaml:lr})`,
  ]);
  const wrong = resolveParams(
    pipeline?.params ?? {},
    parseAssignmentArgs(['featurize.ngrams=1.5']).assignments,
  );
  expect(wrong.problems.map((problem) => problem.message)).toEqual([
    `Parameter 'featurize.ngrams': "1.5" is not an int (e.g. featurize.ngrams=1)`,
  ]);
});
