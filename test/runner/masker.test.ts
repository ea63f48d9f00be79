import { describe, expect, test } from 'vitest';
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

test('a secret with blanks around it is hidden without them too, as a shell or a tool prints it', () => {
  const masker = new Masker();
  // `TOKEN="hunter2-s3cr3t "` in an env file, `::add-mask:: $TOKEN` in a stage.
  masker.add('hunter2-s3cr3t ');
  masker.add(' padded-t0ken-value\t');
  expect(masker.mask('token=hunter2-s3cr3t.')).toBe('token=***.');
  expect(masker.mask('padded-t0ken-value at the start')).toBe('*** at the start');
  expect(masker.mask(Buffer.from('hunter2-s3cr3t').toString('base64'))).toBe('***');
  // As written, it is still hidden whole.
  expect(masker.mask('x hunter2-s3cr3t y')).toBe('x ***y');
});

test('a secret added later hides later lines', () => {
  const masker = new Masker();
  expect(masker.mask('key s3cr3t')).toBe('key s3cr3t');
  masker.add('s3cr3t');
  expect(masker.mask('key s3cr3t')).toBe('key ***');
});

const SECRET = 'hunter2-s3cr3t-value';
const base64 = (text: string) => Buffer.from(text).toString('base64');
const base64url = (text: string) => Buffer.from(text).toString('base64url');

/** A masker with `secret` and, with `decoys`, that many other secrets: past a few, forms are found another way. */
function maskerWith(secret: string, decoys: number): Masker {
  const masker = new Masker();
  for (let at = 0; at < decoys; at++) masker.add(`decoy-${at}-Xq7vLm2pRt9w`);
  masker.add(secret);
  return masker;
}

// Encoded inside longer text, a secret starts at byte 0, 1 or 2 of a 3-byte base64 group;
// the characters that also hold a bit of its neighbours' (`YWJjZG`, `V4eXo=`) stay.
describe.each([
  { among: 'alone', decoys: 0 },
  { among: 'among 100 other secrets', decoys: 100 },
])('base64 of a secret $among', ({ decoys }) => {
  test.each([
    { what: 'alone, as `printf %s "$SECRET" | base64` prints it', line: base64(SECRET), masked: '***' },
    { what: 'at byte 0 of a group', line: base64(`abc${SECRET}xyz`), masked: 'YWJj***V4eXo=' },
    { what: 'at byte 1 of a group', line: base64(`abcd${SECRET}xyz`), masked: 'YWJjZG***eHl6' },
    { what: 'at byte 2 of a group', line: base64(`abcde${SECRET}xyz`), masked: 'YWJjZGV***Xh5eg==' },
    {
      what: 'with a newline, as `base64 <<< $SECRET` prints it',
      line: base64(`${SECRET}\n`),
      masked: '***UK',
    },
    {
      what: 'as user:password in a Basic authorization header',
      line: `Authorization: Basic ${base64(`ci-bot:${SECRET}`)}`,
      masked: 'Authorization: Basic Y2ktYm90Om***',
    },
  ])('$what is masked', ({ line, masked }) => {
    expect(maskerWith(SECRET, decoys).mask(line)).toBe(masked);
  });

  // `>`, `?` and `~` make base64 write `+` and `/`, which the URL-safe alphabet spells `-` and `_`.
  test.each([
    { line: base64url('k8s~tok>>en?valueQ'), masked: '***VR' },
    { line: base64url('ak8s~tok>>en?valueQ'), masked: 'YW***UQ' },
    { line: base64url('abk8s~tok>>en?valueQ'), masked: 'YWJ***VE' },
  ])('in the URL-safe alphabet, $line is masked', ({ line, masked }) => {
    expect(line).toMatch(/[-_]/);
    expect(maskerWith('k8s~tok>>en?value', decoys).mask(line)).toBe(masked);
  });
});

test("a secret under 8 bytes has no base64 forms, which ordinary text would hold ('key' shifted by a byte is 'tle')", () => {
  const masker = new Masker();
  masker.add('key');
  masker.add('pa55wrd');
  expect(masker.mask('a subtle title')).toBe('a subtle title');
  expect(masker.mask('the key is key')).toBe('the *** is ***');
  expect(masker.mask(base64('pa55wrd'))).toBe(base64('pa55wrd'));
  masker.add('pa55word');
  expect(masker.mask(base64('pa55word'))).toBe('***');
});

test('a piece holds back enough for the longest form, base64 included, to be masked whole across the cut', () => {
  const masker = new Masker();
  masker.add(SECRET);
  const encoded = base64(SECRET);
  // The base64 (28 characters) is longer than the secret (20): holding back 19 would show most of it.
  const piece = 'x'.repeat(50) + encoded.slice(0, 25);
  const cut = masker.safePrefixLength(piece);
  const shown =
    masker.mask(piece.slice(0, cut)) + masker.mask(piece.slice(cut) + encoded.slice(25) + ' done');
  expect(shown).toBe(`${'x'.repeat(50)}*** done`);
});
