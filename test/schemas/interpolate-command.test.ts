import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { interpolateCommand, shellQuote } from '../../schemas/interpolate-command.js';

test.each(['$(touch /tmp/pwned)', "'; rm -rf ~ #", '`id`', 'two words', "it's", '', '\\n;&|<>*?~{}[]!'])(
  'the shell receives %j as one literal argument',
  (value) => {
    const cmd = interpolateCommand('printf %s ${note}', { note: value });
    expect(execFileSync('/bin/sh', ['-c', cmd], { encoding: 'utf8' })).toBe(value);
  },
);

test('plain values stay readable', () => {
  expect(interpolateCommand('python3 train.py --lr ${lr} --epochs ${epochs}', { lr: 0.1, epochs: 3 })).toBe(
    'python3 train.py --lr 0.1 --epochs 3',
  );
  expect(shellQuote('a b')).toBe("'a b'");
});
