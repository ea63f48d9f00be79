import { describe, expect, test } from 'vitest';
import {
  findGroupMarker,
  groupMarker,
  renderGroupComment,
} from '../../app/github/render/render-group-comment.js';
import type { RunStatus } from '../../schemas/statuses.js';
import { makeRun } from './fixtures.js';

const GROUP = '01JNGROUP00000000000000001';
const goals = { accuracy: { goal: 'max' as const }, loss: { goal: 'min' as const } };

function member(
  index: number,
  params: Record<string, number>,
  status: RunStatus,
  metrics: Record<string, number>,
) {
  return {
    run: makeRun({
      id: `01JNRUN000000000000000000${index}`,
      groupId: GROUP,
      groupIndex: index,
      params,
      status,
      metrics,
    }),
    metrics,
    checkName: `fluksio (${Object.entries(params)
      .map(([key, value]) => `${key}=${value}`)
      .join(', ')})`,
  };
}

describe('the sweep comparison comment', () => {
  const runs = [
    // Given out of order: rows follow the grid.
    member(3, { lr: 0.01, seed: 2 }, 'running', { loss: 0.01 }),
    member(0, { lr: 0.1, seed: 1 }, 'succeeded', { accuracy: 0.91, loss: 0.3 }),
    member(1, { lr: 0.1, seed: 2 }, 'succeeded', { accuracy: 0.93, loss: 0.2 }),
    member(2, { lr: 0.01, seed: 1 }, 'failed', { accuracy: 0.99 }),
  ];
  const body = renderGroupComment({ groupId: GROUP, runs, goals });

  test.each([
    ['starts with the hidden marker', `<!-- fluksio:group:${GROUP} -->\n`],
    ['counts finished runs', '### fluksio sweep: 3 of 4 runs finished'],
    [
      'has a column per swept param and goal metric',
      '| lr | seed | status | `accuracy` (max) | `loss` (min) | run |',
    ],
    [
      'marks the best of a max goal',
      '| `0.1` | `2` | ✅ succeeded | **0.93** 🏆 | **0.2** 🏆 | `01JNRUN0000000000000000001` |',
    ],
    ['leaves the rest plain', '| `0.1` | `1` | ✅ succeeded | 0.91 | 0.3 | `01JNRUN0000000000000000000` |'],
    ['never crowns a failed run', '| `0.01` | `1` | ❌ failed | 0.99 | – | `01JNRUN0000000000000000002` |'],
    ['never crowns a running run', '| `0.01` | `2` | ▶️ running | – | 0.01 | `01JNRUN0000000000000000003` |'],
  ])('%s', (_name, expected) => {
    expect(body).toContain(expected);
  });

  test('says there is no baseline, and shows no change', () => {
    expect(body).toContain('No baseline: no clean successful run of this pipeline');
    expect(body).not.toContain('%)');
  });

  test('rows follow the grid order', () => {
    const order = [...body.matchAll(/`(01JNRUN\d+)`/g)].map((match) => match[1]);
    expect(order).toEqual(runs.map((each) => each.run.id).sort());
  });

  test('tied best values are all marked', () => {
    const tied = renderGroupComment({
      groupId: GROUP,
      runs: [
        member(0, { lr: 0.1 }, 'succeeded', { accuracy: 0.9 }),
        member(1, { lr: 0.2 }, 'succeeded', { accuracy: 0.9 }),
        member(2, { lr: 0.3 }, 'succeeded', { accuracy: 0.7 }),
      ],
      goals: { accuracy: { goal: 'max' } },
    });
    expect(tied.match(/🏆/g)?.length).toBe(2 + 1 /* the legend */);
  });

  test('marks nothing when every run holds the same value', () => {
    const same = renderGroupComment({
      groupId: GROUP,
      runs: [
        member(0, { lr: 0.1 }, 'succeeded', { accuracy: 0.9 }),
        member(1, { lr: 0.2 }, 'succeeded', { accuracy: 0.9 }),
      ],
      goals: { accuracy: { goal: 'max' } },
    });
    expect(same.match(/🏆/g)?.length).toBe(1 /* the legend */);
  });

  test('stays within the 65,536-character comment limit with huge values', () => {
    const huge = Array.from({ length: 32 }, (_, index) => ({
      ...member(index, {}, 'succeeded', {}),
      run: makeRun({
        id: `01JNRUN${String(index).padStart(19, '0')}`,
        groupIndex: index,
        params: { note: `${'x'.repeat(5_000)}${index}` },
      }),
    }));
    const manyGoals = Object.fromEntries(
      Array.from({ length: 400 }, (_, index) => [`metric_${index}`, { goal: 'max' as const }]),
    );
    const big = renderGroupComment({ groupId: GROUP, runs: huge, goals: manyGoals });
    expect(big.length).toBeLessThanOrEqual(65_536);
    expect(Buffer.byteLength(big, 'utf8')).toBeLessThanOrEqual(65_536);
    expect(findGroupMarker(big)).toBe(GROUP);
    expect(big).toContain('✂️ **Truncated**');
  });
});

describe('a sweep comment with its baseline', () => {
  const baseline = makeRun({
    id: '01JNBASE000000000000000000',
    params: { lr: 0.001, seed: 1 },
    status: 'succeeded',
    metrics: { accuracy: 0.8, loss: 0.5, epochs: 0 },
  });
  const body = renderGroupComment({
    groupId: GROUP,
    runs: [
      member(0, { lr: 0.1, seed: 1 }, 'succeeded', { accuracy: 0.88, loss: 0.4, epochs: 3 }),
      member(1, { lr: 0.01, seed: 1 }, 'succeeded', { accuracy: 0.76, loss: 0.6 }),
    ],
    goals,
    baseline: { run: baseline, label: 'main @ 1a2b3c4 (merge-base)' },
  });

  test.each([
    [
      'names the baseline',
      "against the sweep's baseline, main @ 1a2b3c4 (merge-base), run `01JNBASE000000000000000000`",
    ],
    [
      'shows only the params that vary, and metrics without a goal after those with one',
      '| lr | status | `accuracy` (max) | `loss` (min) | `epochs` | run |',
    ],
    [
      'has the baseline as a row',
      '| `0.001` | 📏 **baseline** | 0.8 | 0.5 | 0 | `01JNBASE000000000000000000` |',
    ],
    [
      'diffs each member against the baseline, the best marked',
      '| `0.1` | ✅ succeeded | **0.88** 🏆 (+10.0%) | **0.4** 🏆 (−20.0%) | 3 (+3) | `01JNRUN0000000000000000000` |',
    ],
    [
      'diffs a worse member too',
      '| `0.01` | ✅ succeeded | 0.76 (−5.0%) | 0.6 (+20.0%) | – | `01JNRUN0000000000000000001` |',
    ],
  ])('%s', (_name, expected) => {
    expect(body).toContain(expected);
  });

  test('counts only the members', () => {
    expect(body).toContain('### fluksio sweep: 2 of 2 runs finished');
  });
});

describe('a sweep comment naming what the stages reported', () => {
  // The comment is the App's, on the pull request: GitHub notifies whoever it mentions and
  // links what looks like a URL or a reference. Metric names are whatever the stages (a
  // fork's code, once approved) printed, so none of that may come out of them.
  const names = ['@acme/everyone', 'https://evil.example/login', 'www.evil.example', 'acme/other#1'];
  const body = renderGroupComment({
    groupId: GROUP,
    runs: [member(0, { lr: 0.1 }, 'succeeded', Object.fromEntries(names.map((name) => [name, 1])))],
    goals: {},
  });
  const outsideCode = body.replace(/`[^`\n]*`/g, '');

  test.each(names)('shows %s as typed, in a code span', (name) => {
    expect(body).toContain(`\`${name}\``);
    expect(outsideCode).not.toContain(name);
  });
});

describe('the group marker', () => {
  test.each([GROUP, '01jngroup', 'group_1-a'])('round-trips %s', (id) => {
    expect(findGroupMarker(`${groupMarker(id)}\n### fluksio sweep`)).toBe(id);
  });

  test.each([
    ['no marker', 'Nice results!'],
    ['another marker', '<!-- some-other-bot:group:1 -->'],
    ['a marker quoted further down', `Like this:\n> ${groupMarker(GROUP)}`],
  ])('finds nothing in a comment with %s', (_name, body) => {
    expect(findGroupMarker(body)).toBeNull();
  });

  test('refuses an id that could end the HTML comment', () => {
    expect(() => groupMarker('x --> <b>')).toThrow('Group id "x --> <b>" cannot be put in a marker');
  });
});
