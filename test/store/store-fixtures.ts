import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { sha256Hex } from '../../core/canonical-json.js';
import { CACHE_KEY_VERSION, type KeyInputs } from '../../schemas/key-inputs.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { NewRun } from '../../schemas/tables/runs.js';

const nextUlid = monotonicFactory();

/** A repository name no other test uses, so tests sharing a database never see each other's rows. */
export function uniqueRepository(): string {
  return `acme/repo-${randomBytes(4).toString('hex')}`;
}

/** A run as `fluksio run` would create it, with whatever the test cares about overridden. */
export function makeRun(overrides: Partial<NewRun> & { repository: string }): NewRun {
  return {
    id: nextUlid(),
    pipelinePath: 'fluksio.yml',
    commit: 'c'.repeat(40),
    dirty: false,
    codeDigest: 'code',
    params: { lr: 0.1 },
    paramsDigest: 'params-lr-0.1',
    envDigest: 'env',
    status: 'running',
    startedAt: new Date(),
    ...overrides,
  };
}

export function makeKeyInputs(overrides: Partial<KeyInputs> = {}): KeyInputs {
  return {
    version: CACHE_KEY_VERSION,
    template: 'python train.py --lr ${lr}',
    cmd: 'python train.py --lr 0.1',
    deps: { 'train.py': sha256Hex('train.py') },
    params: { lr: 0.1 },
    outs: ['model.bin'],
    metrics: ['metrics/train.json'],
    code: { digest: 'code', manifest: null },
    env: {},
    interpreters: {},
    fingerprint: null,
    readSet: null,
    untraced: null,
    ...overrides,
  };
}

/** A stage that ran and succeeded: cacheable. */
export function makeStageRecord(overrides: Partial<StageRecord> & { name: string }): StageRecord {
  const keyInputs = overrides.keyInputs === undefined ? makeKeyInputs() : overrides.keyInputs;
  return {
    status: 'ran',
    cacheKey: keyInputs ? sha256Hex(JSON.stringify(keyInputs) + overrides.name) : null,
    keyInputs,
    cachedFrom: null,
    cachedFromTeam: false,
    reasons: ['no cache entry'],
    notes: [],
    startedAt: '2025-01-02T03:04:05.678Z',
    finishedAt: '2025-01-02T03:04:07.000Z',
    durationMs: 1322,
    exitCode: 0,
    outs: [{ path: 'model.bin', kind: 'file', digest: `sha256:${sha256Hex('model')}`, size: 5 }],
    metrics: { accuracy: 0.9 },
    logTail: 'done\n',
    logDigest: `sha256:${sha256Hex('log')}`,
    error: null,
    dirtyReasons: [],
    warnings: [],
    usage: null,
    pending: null,
    ...overrides,
  };
}
