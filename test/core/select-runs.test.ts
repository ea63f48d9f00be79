import { describe, expect, test } from 'vitest';
import { experimentColumns } from '../../core/experiments/experiment-columns.js';
import type { ExperimentRun } from '../../core/experiments/experiment-run.js';
import { selectRuns, type RunSelection } from '../../core/experiments/select-runs.js';
import { RunFilter } from '../../schemas/run-filter.js';
import { RunSort } from '../../schemas/run-sort.js';

/** Newest first, as the store lists them. */
const RUNS: ExperimentRun[] = [
  {
    id: 'E',
    status: 'failed',
    commit: 'ccc',
    dirty: false,
    params: { lr: 9, opt: 'sgd' },
    metrics: {},
    createdAt: new Date(5),
  },
  {
    id: 'D',
    status: 'succeeded',
    commit: 'bbb',
    dirty: true,
    params: { lr: 0.2, opt: 'adam' },
    metrics: { loss: 0.2, acc: 0.7 },
    createdAt: new Date(4),
  },
  {
    id: 'C',
    status: 'succeeded',
    commit: 'aaa',
    dirty: false,
    params: { lr: 0.1, opt: 'sgd' },
    metrics: { loss: 0.1, acc: 0.9 },
    createdAt: new Date(3),
  },
  {
    id: 'B',
    status: 'succeeded',
    commit: 'aaa',
    dirty: false,
    params: { lr: 0.2, opt: 'sgd' },
    metrics: { loss: 0.2, acc: 0.8 },
    createdAt: new Date(2),
  },
  {
    id: 'A',
    status: 'succeeded',
    commit: 'aaa',
    dirty: false,
    params: { lr: 0.3, opt: 'sgd' },
    metrics: { loss: 0.3, acc: 0.8 },
    createdAt: new Date(1),
  },
];

const select = (filters: string[], sort?: string, extra: Partial<RunSelection> = {}) =>
  selectRuns(RUNS, {
    filters: filters.map((text) => RunFilter.parse(text)),
    sort: sort === undefined ? null : RunSort.parse(sort),
    descending: null,
    limit: 20,
    goals: { loss: { goal: 'min' }, acc: { goal: 'max' } },
    ...extra,
  });
const ids = (result: { runs: ExperimentRun[]; problems: string[] }) => {
  expect(result.problems).toEqual([]);
  return result.runs.map((run) => run.id).join('');
};

describe('selectRuns', () => {
  test.each([
    [[], undefined, 'EDCBA'],
    [['lr=0.2'], undefined, 'DB'],
    [['lr=0.20'], undefined, 'DB'],
    [['lr!=0.2'], undefined, 'ECA'],
    [['loss<0.25'], undefined, 'DCB'],
    [['loss>=0.2', 'acc<=0.8'], undefined, 'DBA'],
    [['status=failed'], undefined, 'E'],
    [['status!=failed', 'opt=sgd'], undefined, 'CBA'],
    [['commit=AA'], undefined, 'CBA'],
    [['id=d'], undefined, 'D'],
    [['loss!=0.2'], undefined, 'ECA'],
    [[], 'loss', 'CDBAE'],
    [[], '-loss', 'ADBCE'],
    [[], 'acc', 'CBADE'],
    [[], 'lr', 'CDBAE'],
    [[], 'opt', 'DECBA'],
    [[], 'when', 'EDCBA'],
    [[], '-status', 'DCBAE'],
  ] as const)('filters %j sorted by %s: %s', (filters, sort, expected) => {
    expect(ids(select([...filters], sort))).toBe(expected);
  });

  test('--desc and --asc override the default direction; the limit comes last', () => {
    expect(ids(select([], 'acc', { descending: false }))).toBe('DBACE');
    expect(ids(select([], 'when', { descending: false, limit: 2 }))).toBe('AB');
  });

  test('names no run has, orders on a status and statuses that do not exist are every one a problem', () => {
    expect(select(['lrr=1', 'status>1', 'status=done', 'when=3'], 'speed').problems).toEqual([
      '--filter "lrr=1": no run has "lrr" (params: lr, opt; metrics: loss, acc; or id, status, commit, when)',
      '--filter "status>1": status takes = or !=, not >',
      '--filter "status=done": "done" is not a run status (one of queued, running, succeeded, failed, cancelled, timed_out, abandoned)',
      '--filter "when=3": when sorts (--sort when), it does not filter',
      '--sort speed: no run has it (params: lr, opt; metrics: loss, acc; or id, status, commit, when)',
    ]);
  });
});

describe('RunFilter and RunSort', () => {
  test.each([
    ['lr', '"lr" is not a filter'],
    ['=0.1', '"=0.1" is not a filter'],
    ['lr=', '"lr=" is not a filter'],
    ['acc>high', '"acc>high": > compares numbers, and "high" is not one (e.g. acc>0.9)'],
  ])('%j is refused: %s', (text, message) => {
    const parsed = RunFilter.safeParse(text);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toContain(message);
  });

  test('== is =, blanks around the operator are allowed, a value may hold blanks', () => {
    expect(RunFilter.parse('lr == 0.1')).toEqual({ text: 'lr == 0.1', name: 'lr', op: '=', value: '0.1' });
    expect(RunFilter.parse('note=two words')).toMatchObject({ name: 'note', value: 'two words' });
    expect(RunSort.parse('-acc')).toEqual({ name: 'acc', descending: true });
    expect(RunSort.safeParse('--').success).toBe(false);
  });
});

describe('experimentColumns', () => {
  test('only what varies, goals first; what every run shares is kept aside', () => {
    const succeeded = RUNS.filter((run) => run.status === 'succeeded' && run.id !== 'D');
    expect(experimentColumns(succeeded, { all: false, goals: { acc: { goal: 'max' } } })).toEqual({
      params: ['lr'],
      metrics: ['acc', 'loss'],
      sameParams: { opt: 'sgd' },
      sameMetrics: {},
    });
    expect(experimentColumns(RUNS.slice(2, 3), { all: false, goals: {} }).params).toEqual(['lr', 'opt']);
    expect(experimentColumns(RUNS.slice(3), { all: true, goals: {} })).toMatchObject({
      params: ['lr', 'opt'],
      sameParams: {},
    });
  });
});
