import { expect, test } from 'vitest';
import { rerunReasons, type RerunContext } from '../../runner/keys/rerun-reasons.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';

const inputs: KeyInputs = {
  version: CACHE_KEY_VERSION,
  template: 'python3 train.py ${lr} ${s}',
  cmd: 'python3 train.py 1 1',
  deps: { 'train.py': 'sha256:t1', 'data/clean.csv': 'sha256:d1' },
  params: { lr: 1, s: 1 },
  outs: ['model.bin'],
  metrics: ['metrics/train.json'],
  code: { digest: 'c1', manifest: null },
  env: { PATH: '/usr/bin', MYVAR: 'a' },
  interpreters: { python3: { path: '/usr/bin/python3.11', digest: 'sha256:p1' } },
  fingerprint: 'f1',
  readSet: null,
  untraced: null,
};
const context: RerunContext = {
  producerOf: (dep) => (dep === 'data/clean.csv' ? 'prepare' : null),
  ranUpstream: new Set(['prepare']),
  codeChanges: ['helpers.py changed'],
};
const reasons = (current: Partial<KeyInputs>, previous: KeyInputs = inputs) =>
  rerunReasons({ ...inputs, ...current }, { runId: '01PREVIOUS', keyInputs: previous }, context);

test.each<[string, Partial<KeyInputs>, string[]]>([
  ['a param', { params: { lr: 1, s: 2 }, cmd: 'python3 train.py 1 2' }, ['s 1 → 2']],
  [
    'the command',
    { template: 'python3 train.py ${s} ${lr}', cmd: 'python3 train.py 1 1' },
    ['command changed'],
  ],
  [
    'the command and a param',
    { template: 'python3 t.py ${lr} ${s}', cmd: 'python3 t.py 0.5 1', params: { lr: 0.5, s: 1 } },
    ['command changed', 'lr 1 → 0.5'],
  ],
  ['a dep', { deps: { 'train.py': 'sha256:t2', 'data/clean.csv': 'sha256:d1' } }, ['train.py changed']],
  [
    'an upstream out',
    { deps: { 'train.py': 'sha256:t1', 'data/clean.csv': 'sha256:d2' } },
    ['data/clean.csv changed (upstream prepare re-ran)'],
  ],
  ['the code', { code: { digest: 'c2', manifest: null } }, ['helpers.py changed']],
  ['an env value', { env: { PATH: '/usr/bin', MYVAR: 'b' } }, ['env MYVAR changed']],
  ['PATH', { env: { PATH: '/opt/bin:/usr/bin', MYVAR: 'a' } }, ['env PATH changed']],
  [
    'the interpreter found',
    { interpreters: { python3: { path: '/opt/py/bin/python3.12', digest: 'sha256:p2' } } },
    ['python3 is now /opt/py/bin/python3.12 (was /usr/bin/python3.11)'],
  ],
  [
    "the interpreter's bytes",
    { interpreters: { python3: { path: '/usr/bin/python3.11', digest: 'sha256:p2' } } },
    ['python3 (/usr/bin/python3.11) changed'],
  ],
  [
    'an interpreter gone',
    { interpreters: { python3: null } },
    ['python3 is now not found on PATH (was /usr/bin/python3.11)'],
  ],
  ['the fingerprint', { fingerprint: 'f2' }, ['fingerprint output changed']],
  ['the outs', { outs: ['model.pt'] }, ['declared outs or metrics changed']],
])('names a change of %s, and nothing else', (_kind, current, expected) => {
  expect(reasons(current)).toEqual(expected);
});

test('with nothing different, it says which run had the same inputs', () => {
  expect(reasons({})).toEqual(['same inputs as in run 01PREVIOUS, whose result is not in the cache']);
});

test('without a previous run, or across key recipes, it says so', () => {
  expect(rerunReasons(inputs, null, context)).toEqual(['no earlier run of this stage']);
  const old = { ...inputs, version: 1 } as unknown as KeyInputs;
  expect(reasons({}, old)).toEqual(['the cache key recipe changed']);
});
