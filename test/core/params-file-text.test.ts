import { parse } from 'yaml';
import { expect, test } from 'vitest';
import { paramsFileText } from '../../core/pipeline/params-file-text.js';
import { paramVariableName } from '../../core/pipeline/param-variables.js';

const VALUES = { lr: 0.1, epochs: 3, note: 'two words', fast: true, 'train.n_est': 50, 'train.min_split': 2 };

test.each([
  ['params.json', ['lr', 'epochs'], '{\n  "lr": 0.1,\n  "epochs": 3\n}\n'],
  ['params.yaml', ['lr', 'note', 'fast'], 'lr: 0.1\nnote: two words\nfast: true\n'],
  ['p.yml', ['train.n_est', 'train.min_split'], 'train:\n  n_est: 50\n  min_split: 2\n'],
  ['params.json', [], '{}\n'],
])('%s with %j holds only those params, dotted names nested', (file, listed, text) => {
  expect(paramsFileText(file, listed, VALUES)).toBe(text);
});

test('a dotted name that cannot nest under another param stays whole, and the file still parses', () => {
  const text = paramsFileText('params.yaml', ['train', 'train.n_est'], { train: 'x', 'train.n_est': 50 });
  expect(parse(text)).toEqual({ train: 'x', 'train.n_est': 50 });
});

test.each([
  ['lr', 'FLUKSIO_PARAM_LR'],
  ['batch_size', 'FLUKSIO_PARAM_BATCH_SIZE'],
  ['featurize.max_features', 'FLUKSIO_PARAM_FEATURIZE_MAX_FEATURES'],
  ['learning-rate', 'FLUKSIO_PARAM_LEARNING_RATE'],
  ['train.max-depth', 'FLUKSIO_PARAM_TRAIN_MAX_DEPTH'],
])('param %s reaches stages as %s', (param, variable) => {
  expect(paramVariableName(param)).toBe(variable);
});
