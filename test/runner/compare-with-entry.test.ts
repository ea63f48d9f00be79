import { describe, expect, test } from 'vitest';
import type { CacheEntry } from '../../schemas/cache-entry.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import type { DirManifest } from '../../schemas/out-record.js';
import { cacheKeyOf } from '../../runner/keys/cache-key.js';
import {
  compareWithEntry,
  differingFiles,
  metricDifferences,
  outDifferences,
  type FreshResult,
} from '../../runner/keys/compare-with-entry.js';

const digest = (char: string) => `sha256:${char.repeat(64)}`;
const inputs: KeyInputs = {
  version: CACHE_KEY_VERSION,
  template: 'python3 train.py ${lr}',
  cmd: "python3 train.py '0.1'",
  deps: { 'train.py': digest('a'), 'data/clean.csv': digest('b') },
  params: { lr: 0.1 },
  outs: ['model.txt'],
  metrics: [],
  code: { digest: 'c0de', manifest: null },
  env: { DEVICE: 'cpu' },
  interpreters: {},
  fingerprint: null,
  readSet: null,
  untraced: null,
};
const entry: CacheEntry = {
  key: cacheKeyOf(inputs),
  stage: 'train',
  runId: '01RUN',
  outs: [{ path: 'model.txt', kind: 'file', digest: digest('d'), size: 3 }],
  metrics: { loss: 0.25 },
  keyInputs: inputs,
  createdAt: '2026-12-01T00:00:00.000Z',
};
const fresh = (keyInputs: KeyInputs, fields: Partial<FreshResult> = {}): FreshResult => ({
  cacheKey: cacheKeyOf(keyInputs),
  keyInputs,
  outs: entry.outs,
  metrics: entry.metrics,
  ...fields,
});
const context = {
  producerOf: (dep: string) => (dep === 'data/clean.csv' ? 'prepare' : null),
  codeChanges: null,
};

describe('compareWithEntry', () => {
  test.each([
    ['the same inputs and bytes', entry, fresh(inputs), []],
    [
      'a dep whose digest the entry claims differently',
      entry,
      fresh({ ...inputs, deps: { ...inputs.deps, 'train.py': digest('e') } }),
      ['train.py changed'],
    ],
    ['another param value', entry, fresh({ ...inputs, params: { lr: 0.5 } }), ['lr 0.1 → 0.5']],
    ['another env value', entry, fresh({ ...inputs, env: { DEVICE: 'gpu' } }), ['env DEVICE changed']],
    [
      'stored inputs altered after the key was made',
      { ...entry, keyInputs: { ...inputs, params: { lr: 0.2 } } },
      fresh(inputs),
      ['lr 0.2 → 0.1'],
    ],
    [
      'a key that its own inputs do not hash to',
      { ...entry, key: '0'.repeat(64) },
      fresh(inputs),
      [`the entry is stored under key ${'0'.repeat(64)}, which its own key inputs do not hash to`],
    ],
  ])('%s', (_, cached, result, expected) => {
    expect(compareWithEntry(cached, result, context).keyDifferences).toEqual(expected);
  });

  test('names the code files that differ when the manifests could be read', () => {
    const changed = fresh({ ...inputs, code: { digest: 'other', manifest: null } });
    expect(
      compareWithEntry(entry, changed, { ...context, codeChanges: ['helpers.py changed'] }).keyDifferences,
    ).toEqual(['helpers.py changed']);
  });

  test('names outs and metrics that differ, cached → fresh', () => {
    const comparison = compareWithEntry(
      entry,
      fresh(inputs, {
        outs: [{ path: 'model.txt', kind: 'file', digest: digest('f'), size: 3 }],
        metrics: { loss: 0.5 },
      }),
      context,
    );
    expect(comparison.outs).toEqual([{ path: 'model.txt', cached: digest('d'), fresh: digest('f') }]);
    expect(comparison.metrics).toEqual(['loss 0.25 → 0.5']);
  });
});

describe('outDifferences and metricDifferences', () => {
  test('an out the fresh execution did not make differs with fresh null', () => {
    expect(outDifferences(entry.outs, [])).toEqual([{ path: 'model.txt', cached: digest('d'), fresh: null }]);
  });

  test('a metric only one side has shows – for the other', () => {
    expect(metricDifferences({ loss: 1 }, { accuracy: 0.5, loss: 1 })).toEqual(['accuracy – → 0.5']);
  });
});

describe('differingFiles', () => {
  const file = (path: string, char: string, executable = false) => ({
    path,
    digest: digest(char),
    size: 1,
    executable,
  });
  const manifest = (files: DirManifest['files']): DirManifest => ({ version: 1, files });

  test('names changed, added and removed files and a lost exec bit, sorted', () => {
    expect(
      differingFiles(
        manifest([file('a', '1'), file('b', '2'), file('run.sh', '3', true)]),
        manifest([file('a', '1'), file('b', '9'), file('c', '4'), file('run.sh', '3')]),
      ),
    ).toEqual(['b', 'c', 'run.sh']);
  });

  test('names a few and counts the rest', () => {
    const many = Array.from({ length: 8 }, (_, index) => file(`f${index}`, '1'));
    expect(differingFiles(manifest([]), manifest(many), 3)).toEqual(['f0', 'f1', 'f2', 'and 5 more files']);
  });
});
