import { describe, expect, test } from 'vitest';
import { parseAssignmentArgs, parseAssignmentText } from '../../core/params/param-assignments.js';
import type { ParamSpec } from '../../schemas/pipeline.js';
import { resolveParams, resolveTypedParams } from '../../core/params/resolve-params.js';

const specs: Record<string, ParamSpec> = {
  lr: { type: 'float', default: 0.01, min: 0 },
  epochs: { type: 'int', default: 3, min: 1 },
  seed: { type: 'int', default: 0 },
  model: { type: 'string', default: 'small', enum: ['small', 'large'] },
  note: { type: 'string', default: '' },
  fast: { type: 'bool', default: false },
};

function resolveText(text: string) {
  const parsed = parseAssignmentText(text);
  const resolved = resolveParams(specs, parsed.assignments);
  return { grid: resolved.grid, problems: [...parsed.problems, ...resolved.problems].map((p) => p.message) };
}

describe('the k=v grammar', () => {
  test.each([
    ['lr=0.1', [{ key: 'lr', values: ['0.1'] }]],
    [
      'lr=0.1,0.01 seed=1,2',
      [
        { key: 'lr', values: ['0.1', '0.01'] },
        { key: 'seed', values: ['1', '2'] },
      ],
    ],
    ['note="two words"', [{ key: 'note', values: ['two words'] }]],
    ["note='a,b'", [{ key: 'note', values: ['a,b'] }]],
    ['note="say \\"hi\\""', [{ key: 'note', values: ['say "hi"'] }]],
    ['note=a\\,b', [{ key: 'note', values: ['a,b'] }]],
    ['note=""', [{ key: 'note', values: [''] }]],
    [
      '  lr=1   seed=2 ',
      [
        { key: 'lr', values: ['1'] },
        { key: 'seed', values: ['2'] },
      ],
    ],
    ['note=$(touch /tmp/pwned)', [{ key: 'note', values: ['$(touch', '/tmp/pwned)'].slice(0, 1) }]],
  ])('%s', (text, expected) => {
    const parsed = parseAssignmentText(text);
    if (text.startsWith('note=$(')) {
      // Unquoted blanks end a token: "/tmp/pwned)" is a second, malformed token.
      expect(parsed.problems.map((p) => p.message)).toEqual(['"/tmp/pwned)" is not key=value (e.g. lr=0.1)']);
      return;
    }
    expect(parsed.problems).toEqual([]);
    expect(parsed.assignments).toEqual(expected);
  });

  test('arguments split by a shell keep their blanks and split only on unescaped commas', () => {
    expect(parseAssignmentArgs(['note=two words', 'lr=0.1,0.2', 'tag=a\\,b']).assignments).toEqual([
      { key: 'note', values: ['two words'] },
      { key: 'lr', values: ['0.1', '0.2'] },
      { key: 'tag', values: ['a,b'] },
    ]);
  });

  test.each([
    ['lr', '"lr" is not key=value (e.g. lr=0.1)'],
    ['=3', '"=3": "" is not a parameter name (e.g. lr=0.1)'],
    ['note="open', 'Unterminated " quote in "\\"open"'],
    ['lr=1 lr=2', "Parameter 'lr' is given twice; for a sweep write lr=a,b"],
    ['lr=0.1,', 'Parameter \'lr\': a sweep has an empty value in "lr=0.1,"'],
  ])('%s is refused', (text, message) => {
    expect(parseAssignmentText(text).problems.map((p) => p.message)).toEqual([message]);
  });
});

describe('typed parameter values', () => {
  test('defaults fill what is not given', () => {
    expect(resolveText('lr=0.1').grid).toEqual([
      { lr: 0.1, epochs: 3, seed: 0, model: 'small', note: '', fast: false },
    ]);
  });

  test.each([
    ['lr=fast', `Parameter 'lr': "fast" is not a float (e.g. lr=0.01)`],
    ['nosuch=1', "Unknown parameter 'nosuch'; the pipeline declares: lr, epochs, seed, model, note, fast"],
    [
      'seed=9007199254740993',
      `Parameter 'seed': "9007199254740993" is beyond ±9007199254740991 (2^53−1), the largest integer carried exactly`,
    ],
    ['epochs=1.5', `Parameter 'epochs': "1.5" is not an int (e.g. epochs=3)`],
    ['epochs=0', `Parameter 'epochs': "0" is below the minimum 1`],
    ['model=huge', `Parameter 'model': "huge" is not one of small, large`],
    ['fast=yes', `Parameter 'fast': "yes" is not a bool (fast=true or fast=false)`],
    ['lr=1e999', `Parameter 'lr': "1e999" is not a finite float`],
    ['lr=nan', `Parameter 'lr': "nan" is not a float (e.g. lr=0.01)`],
  ])('%s is refused with a sentence', (text, message) => {
    const { grid, problems } = resolveText(text);
    expect(grid).toEqual([]);
    expect(problems).toEqual([message]);
  });

  test('every problem is reported at once', () => {
    expect(resolveText('lr=fast nosuch=1 epochs=0').problems).toHaveLength(3);
  });

  test('integers up to 2^53−1 are exact', () => {
    expect(resolveText('seed=9007199254740991').grid[0]?.seed).toBe(9007199254740991);
    expect(resolveText('seed=-9007199254740991').grid[0]?.seed).toBe(-9007199254740991);
  });

  test('−0 is 0, typed in, claimed or by default: every copy of a value says what its cache key says', () => {
    // toBe compares with Object.is, which tells −0 from 0.
    expect(resolveText('lr=-0').grid[0]?.lr).toBe(0);
    expect(resolveText('lr=-0.0e5').grid[0]?.lr).toBe(0);
    expect(resolveText('seed=-0').grid[0]?.seed).toBe(0);
    expect(resolveTypedParams(specs, { lr: -0 }).params?.lr).toBe(0);
    expect(resolveParams({ lr: { type: 'float', default: -0 } }, []).grid[0]?.lr).toBe(0);
  });

  test('a sweep is the grid of every combination, first key slowest', () => {
    const { grid } = resolveText('lr=0.1,0.01 seed=1,2');
    expect(grid.map((params) => [params.lr, params.seed])).toEqual([
      [0.1, 1],
      [0.1, 2],
      [0.01, 1],
      [0.01, 2],
    ]);
  });

  test('a sweep of more than 32 runs is refused', () => {
    expect(resolveText('lr=1,2,3,4,5,6,7,8,9 seed=1,2,3,4').problems).toEqual([
      'The sweep makes 36 runs (9 lr × 4 seed); a sweep is at most 32 runs',
    ]);
  });

  test('a hostile string stays a string', () => {
    expect(resolveText(`note="$(touch /tmp/pwned)"`).grid[0]?.note).toBe('$(touch /tmp/pwned)');
    expect(resolveText(`note="'; rm -rf ~ #"`).grid[0]?.note).toBe("'; rm -rf ~ #");
  });

  test('a param without a default must be given', () => {
    const resolved = resolveParams({ data: { type: 'string' } }, []);
    expect(resolved.problems.map((p) => p.message)).toEqual([
      "Parameter 'data' has no default: give it, e.g. data=value",
    ]);
  });
});
