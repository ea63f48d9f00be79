import { expect, test } from 'vitest';
import { Masker } from '../../runner/output/masker.js';

test.each([
  { secrets: ['hunter2'], line: 'password is hunter2!', masked: 'password is ***!' },
  { secrets: ['hunter2'], line: 'hunter2 hunter2', masked: '*** ***' },
  { secrets: ['abc', 'abcdef'], line: 'x abcdef y', masked: 'x *** y' },
  { secrets: ['abcdef', 'abc'], line: 'x abcdef y abc', masked: 'x *** y ***' },
  { secrets: ['abc', 'bcd'], line: 'abcd', masked: '***' },
  { secrets: ['tok'], line: 'toktok', masked: '***' },
  { secrets: ['first line\nsecond line'], line: 'second line, then first line', masked: '***, then ***' },
  { secrets: ['one\r\ntwo'], line: 'one two', masked: '*** ***' },
  { secrets: ['', '   ', '\n\t\n'], line: 'nothing to hide here', masked: 'nothing to hide here' },
  { secrets: ['a.b*'], line: 'a.b* and axb', masked: '*** and axb' },
  { secrets: [], line: 'no secrets', masked: 'no secrets' },
  // As tools print it escaped: percent-encoded in a URL, in a JSON string, in a workflow command.
  { secrets: ['p@ss:w%rd'], line: 'postgres://u:p%40ss%3Aw%25rd@db', masked: 'postgres://u:***@db' },
  { secrets: ['say "hi"\\'], line: '{"greeting": "say \\"hi\\"\\\\"}', masked: '{"greeting": "***"}' },
  { secrets: ['a%b:c,d'], line: '::error title=a%25b%3Ac%2Cd::a%25b:c,d', masked: '::error title=***::***' },
])('with $secrets, $line → $masked', ({ secrets, line, masked }) => {
  const masker = new Masker();
  for (const secret of secrets) masker.add(secret);
  expect(masker.mask(line)).toBe(masked);
});

test('a secret added later hides later lines', () => {
  const masker = new Masker();
  expect(masker.mask('key s3cr3t')).toBe('key s3cr3t');
  masker.add('s3cr3t');
  expect(masker.mask('key s3cr3t')).toBe('key ***');
});
