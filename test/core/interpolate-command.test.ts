import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { interpolateCommand, shellQuote } from '../../core/pipeline/interpolate-command.js';

const HOSTILE = [
  '$(touch /tmp/pwned)',
  "'; rm -rf ~ #",
  '`id`',
  'two words',
  "it's",
  '',
  '\\n;&|<>*?~{}[]!',
  '"; echo out; "',
  '\'"$(id)"\'',
  'line\nbreak',
  'A=b',
];

test.each(HOSTILE)('the shell receives %j as one literal argument, quoted or not', (value) => {
  for (const [cmd, expected] of [
    ['printf %s ${note}', value],
    ['printf %s "${note}"', value],
    ["printf %s '${note}'", value],
    ['printf %s "note=${note}!"', `note=${value}!`],
    ["printf %s 'note=${note}!'", `note=${value}!`],
  ] as const) {
    const interpolated = interpolateCommand(cmd, { note: value });
    expect(execFileSync('/bin/sh', ['-c', interpolated], { encoding: 'utf8' }), interpolated).toBe(expected);
  }
});

test('a value can never become a variable assignment in front of a command', () => {
  expect(
    execFileSync('/bin/sh', ['-c', `${interpolateCommand('${tool} 2>&1; true', { tool: 'A=b' })}`], {
      encoding: 'utf8',
    }),
  ).toContain('A=b');
});

test('plain values stay readable', () => {
  expect(interpolateCommand('python3 train.py --lr ${lr} --epochs ${epochs}', { lr: 0.1, epochs: 3 })).toBe(
    'python3 train.py --lr 0.1 --epochs 3',
  );
  expect(interpolateCommand('echo "lr=${lr}"', { lr: 0.1 })).toBe('echo "lr=0.1"');
  expect(shellQuote('a b')).toBe("'a b'");
});

test('a placeholder where no quoting is safe is refused, not interpolated', () => {
  expect(() => interpolateCommand('echo $(echo ${note})', { note: 'x' })).toThrow(
    'The command has ${note} inside a command substitution $(…), where its value cannot be quoted safely',
  );
});
