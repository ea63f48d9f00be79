import { expect, test } from 'vitest';
import { terminalText } from '../../present/terminal/terminal-text.js';

test.each([
  ['an OSC title ended by BEL', 'a\x1b]0;pwned\x07b', 'ab'],
  ['an OSC 52 clipboard write ended by ST', 'a\x1b]52;c;cm0gLXJmIH4=\x1b\\b', 'ab'],
  [
    'an OSC 8 hyperlink that lies',
    '\x1b]8;;https://evil.example\x07safe.example\x1b]8;;\x07',
    'safe.example',
  ],
  ['an unterminated OSC', 'a\x1b]0;title to the end', 'a'],
  ['8-bit CSI and OSC', 'a\x9b2Jb\x9d0;t\x9cc', 'abc'],
  ['a DCS string', 'a\x1bPq#0;2;0;0;0\x1b\\b', 'ab'],
  ['cursor movement and screen clearing', 'a\x1b[2J\x1b[H\x1b[1Ab', 'ab'],
  ['a carriage return that paints over the line', 'rm -rf /\rls', 'rm -rf /ls'],
  ['other controls', 'a\x07\x08\x00\x7fb', 'ab'],
  ['a lone ESC at the end', 'ab\x1b', 'ab'],
  ['charset switching', 'a\x1b(0b', 'ab'],
])('%s is dropped', (_name, text, expected) => {
  expect(terminalText(text)).toBe(expected);
});

test('colours, tabs and newlines stay', () => {
  const text = '\x1b[1;31mred\x1b[0m\tplain\n\x1b[38;5;208morange\x1b[m \x1b[38:2:1:2:3mtrue\x1b[39m';
  expect(terminalText(text)).toBe(text);
});
