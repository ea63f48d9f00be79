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
  const body = renderGroupComment({ groupId: GROUP, runs, goals, swept: ['lr', 'seed'] });

  test.each([
    ['starts with the hidden marker', `<!-- fluksio:group:${GROUP} -->\n`],
    ['counts finished runs', '### fluksio sweep: 3 of 4 runs finished'],
    [
      'has a column per swept param and goal metric',
      '| lr | seed | status | accuracy (max) | loss (min) | run |',
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
      ],
      goals: { accuracy: { goal: 'max' } },
      swept: ['lr'],
    });
    expect(tied.match(/🏆/g)?.length).toBe(2 + 1 /* the legend */);
  });

  test('stays within the 65,536-character comment limit with huge values', () => {
    const huge = Array.from({ length: 32 }, (_, index) => ({
      ...member(index, {}, 'succeeded', {}),
      run: makeRun({
        id: `01JNRUN${String(index).padStart(19, '0')}`,
        groupIndex: index,
        params: { note: 'x'.repeat(5_000) },
      }),
    }));
    const manyGoals = Object.fromEntries(
      Array.from({ length: 400 }, (_, index) => [`metric_${index}`, { goal: 'max' as const }]),
    );
    const big = renderGroupComment({ groupId: GROUP, runs: huge, goals: manyGoals, swept: ['note'] });
    expect(big.length).toBeLessThanOrEqual(65_536);
    expect(Buffer.byteLength(big, 'utf8')).toBeLessThanOrEqual(65_536);
    expect(findGroupMarker(big)).toBe(GROUP);
    expect(big).toContain('✂️ **Truncated**');
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
