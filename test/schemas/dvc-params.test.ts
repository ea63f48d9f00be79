import { expect, test } from 'vitest';
import { parseAssignmentArgs } from '../../core/params/param-assignments.js';
import { resolveParams } from '../../core/params/resolve-params.js';
import { dvcParamLocation, overlayDvcParams } from '../../core/dvc/dvc-params-overlay.js';
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
  // lr reaches the stage only through custom.yaml, which holds the run's value while the
  // stage runs (dvc_params), so any value is taken.
  expect(pipeline?.dvc_params).toBe(true);
  const other = resolveParams(
    pipeline?.params ?? {},
    parseAssignmentArgs(['custom.yaml:lr=0.1']).assignments,
  );
  expect(other.problems).toEqual([]);
  expect(other.grid[0]?.['custom.yaml:lr']).toBe(0.1);
  const wrong = resolveParams(
    pipeline?.params ?? {},
    parseAssignmentArgs(['featurize.ngrams=1.5']).assignments,
  );
  expect(wrong.problems.map((problem) => problem.message)).toEqual([
    `Parameter 'featurize.ngrams': "1.5" is not an int (e.g. featurize.ngrams=1)`,
  ]);
});

test('a params file takes the run’s values as dvc exp run -S writes them: comments kept, floats keep their point', () => {
  expect(dvcParamLocation('custom.yaml:opt.lr')).toEqual({ file: 'custom.yaml', path: ['opt', 'lr'] });
  expect(dvcParamLocation('train.layers[1]')).toEqual({ file: 'params.yaml', path: ['train', 'layers', 1] });
  const text = '# defaults\ntrain:\n  lr: 0.5 # step\n  n_est: 50\n  layers: [8, 4]\n';
  const float = { type: 'float', default: 0.5 } as const;
  expect(overlayDvcParams(text, [{ path: ['train', 'lr'], value: 0.5, spec: float }])).toBeNull();
  const written = overlayDvcParams(text, [
    { path: ['train', 'lr'], value: 1, spec: float },
    { path: ['train', 'n_est'], value: 400, spec: { type: 'int', default: 50 } },
    { path: ['train', 'layers'], value: '[16,8]', spec: { type: 'string', default: '[8,4]' } },
    { path: ['train', 'absent'], value: 3, spec: undefined },
  ]);
  expect(written).toBe('# defaults\ntrain:\n  lr: 1.0\n  n_est: 400\n  layers:\n    - 16\n    - 8\n');
  expect(() => overlayDvcParams('a: [', [])).toThrow(/YAML syntax error/);
});
