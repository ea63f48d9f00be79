import { expect, test } from 'vitest';
import { maskStageRecord } from '../../runner/output/mask-stage-record.js';
import { Masker } from '../../runner/output/masker.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import { StageRecord } from '../../schemas/stage-record.js';

const digest = (hex: string) => `sha256:${hex.padEnd(64, '0')}`;
const inputs: KeyInputs = {
  version: CACHE_KEY_VERSION,
  template: 'python3 train.py',
  cmd: 'python3 train.py',
  deps: { 'data.csv': digest('1f2e') },
  params: {},
  outs: ['model.txt'],
  metrics: [],
  code: { digest: '91'.repeat(32), manifest: digest('4a1') },
  env: {},
  interpreters: {},
  fingerprint: null,
  readSet: null,
  untraced: null,
};
const ran = (keyInputs: KeyInputs): StageRecord =>
  StageRecord.parse({
    name: 'train',
    status: 'ran',
    cacheKey: 'k'.repeat(64),
    keyInputs,
    cachedFrom: null,
    reasons: [],
    startedAt: null,
    finishedAt: null,
    durationMs: 1,
    exitCode: 0,
    outs: [],
    metrics: {},
    logTail: '',
    logDigest: null,
    error: null,
  });

test('a short secret that only occurs inside digests (OMP_NUM_THREADS=1 in --env-file) leaves the stage cached and its digests whole', () => {
  const masker = new Masker();
  masker.add('1');
  const masked = maskStageRecord(masker, ran(inputs));
  expect(masked.cacheKey).toBe('k'.repeat(64));
  expect(masked.keyInputs).toEqual(inputs);
  expect(masked.notes).toEqual([]);
});

test('a secret in a key input’s text, or a digest that is itself a secret, is masked and the stage is not cached', () => {
  const secret = 'hf_Kd93sekretQw7rT1nBv5y';
  const masker = new Masker();
  masker.add(secret);
  const named = maskStageRecord(masker, ran({ ...inputs, outs: [`${secret}.bin`] }));
  expect(named.cacheKey).toBeNull();
  expect(named.keyInputs?.outs).toEqual(['***.bin']);

  const hexToken = 'ab'.repeat(32);
  const hexMasker = new Masker();
  hexMasker.add(hexToken);
  const asDigest = maskStageRecord(hexMasker, ran({ ...inputs, code: { digest: hexToken, manifest: null } }));
  expect(asDigest.cacheKey).toBeNull();
  expect(asDigest.keyInputs?.code?.digest).toBe('***');
});
