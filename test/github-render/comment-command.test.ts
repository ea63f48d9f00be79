import { describe, expect, test } from 'vitest';
import {
  MAX_COMMENT_LENGTH,
  parseCommentCommand,
  type CommentCommand,
} from '../../core/params/comment-command.js';

const SHA40 = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';
const SHA64 = 'a'.repeat(64);

function run(
  assignments: [string, string[]][] = [],
  options: { noCache?: boolean; sha?: string | null } = {},
): CommentCommand {
  return {
    kind: 'run',
    assignments: assignments.map(([key, values]) => ({ key, values })),
    noCache: options.noCache ?? false,
    sha: options.sha ?? null,
  };
}

describe('the PR comment grammar', () => {
  test.each<[string, string, CommentCommand]>([
    ['a bare run', '/fluksio run', run()],
    [
      'params',
      '/fluksio run lr=0.1 epochs=3',
      run([
        ['lr', ['0.1']],
        ['epochs', ['3']],
      ]),
    ],
    [
      'a sweep',
      '/fluksio run lr=0.1,0.01 seed=1,2',
      run([
        ['lr', ['0.1', '0.01']],
        ['seed', ['1', '2']],
      ]),
    ],
    ['a quoted value', '/fluksio run note="two words"', run([['note', ['two words']]])],
    ['a quoted comma is no sweep', "/fluksio run note='a,b'", run([['note', ['a,b']]])],
    [
      'a flag inside quotes is part of the value',
      '/fluksio run note="x --no-cache"',
      run([['note', ['x --no-cache']]]),
    ],
    ['--no-cache first', '/fluksio run --no-cache lr=0.1', run([['lr', ['0.1']]], { noCache: true })],
    [
      'flags anywhere among the params',
      '/fluksio run lr=0.1 --no-cache seed=2 --sha 1a2b3c4 epochs=1',
      run(
        [
          ['lr', ['0.1']],
          ['seed', ['2']],
          ['epochs', ['1']],
        ],
        { noCache: true, sha: '1a2b3c4' },
      ),
    ],
    ['--sha with a full SHA', `/fluksio run --sha ${SHA40}`, run([], { sha: SHA40 })],
    ['--sha=value', '/fluksio run --sha=1a2b3c4 lr=1', run([['lr', ['1']]], { sha: '1a2b3c4' })],
    ['--sha of 64 hex digits (sha256 repositories)', `/fluksio run --sha ${SHA64}`, run([], { sha: SHA64 })],
    ['--no-cache twice is harmless', '/fluksio run --no-cache --no-cache', run([], { noCache: true })],
    ['tabs and extra blanks', '/fluksio\trun   lr=0.1  ', run([['lr', ['0.1']]])],
    ['a leading blank line and CRLF', '\r\n\r\n/fluksio run lr=0.1\r\nthanks!', run([['lr', ['0.1']]])],
    ['text after the command line is ignored', '/fluksio run\nlr=0.5 is what I meant', run()],
    [
      'a quoted first line is ignored',
      '> /fluksio run lr=1\n> earlier words\n\n/fluksio run lr=2',
      run([['lr', ['2']]]),
    ],
    [
      'an indented quote is still a quote',
      '  > /fluksio run lr=1\n\n/fluksio run lr=2',
      run([['lr', ['2']]]),
    ],
    ['a quote ended by a blank line', '> earlier words\n\n/fluksio run lr=2', run([['lr', ['2']]])],
    ['an empty quote line ends the quote', '> earlier words\n>\n/fluksio run lr=2', run([['lr', ['2']]])],
    ['three blanks of indentation are no code block', '   /fluksio run lr=2', run([['lr', ['2']]])],
    ['cancel all', '/fluksio cancel', { kind: 'cancel', runId: null }],
    [
      'cancel one',
      '/fluksio cancel 01JNRUN0000000000000000001',
      { kind: 'cancel', runId: '01JNRUN0000000000000000001' },
    ],
    ['cancel by prefix', '/fluksio cancel 01jnrun0', { kind: 'cancel', runId: '01jnrun0' }],
    ['help', '/fluksio help', { kind: 'help' }],
    ['help ignores what follows', '/fluksio help me please', { kind: 'help' }],
  ])('%s', (_name, body, expected) => {
    expect(parseCommentCommand(body)).toEqual(expected);
  });

  test.each<[string, string, string[]]>([
    [
      'a bare /fluksio',
      '/fluksio',
      ['`/fluksio` needs a command: run, cancel or help (e.g. /fluksio run lr=0.1)'],
    ],
    [
      'an unknown command',
      '/fluksio deploy',
      ["Unknown command 'deploy'; fluksio understands run, cancel and help"],
    ],
    [
      'commands are case-sensitive',
      '/fluksio Run',
      ["Unknown command 'Run'; fluksio understands run, cancel and help"],
    ],
    [
      'an unknown flag',
      '/fluksio run --force lr=1',
      ["Unknown option '--force' for /fluksio run; it accepts --no-cache and --sha <prefix>"],
    ],
    [
      '--no-cache with a value',
      '/fluksio run --no-cache=yes',
      ['--no-cache takes no value (got "--no-cache=yes")'],
    ],
    [
      '--sha without a value',
      '/fluksio run lr=1 --sha',
      ['--sha needs a commit SHA prefix (e.g. --sha 1a2b3c4)'],
    ],
    [
      '--sha followed by a flag',
      '/fluksio run --sha --no-cache',
      ['--sha needs a commit SHA prefix (e.g. --sha 1a2b3c4)'],
    ],
    ['--sha= empty', '/fluksio run --sha=', ['--sha needs a commit SHA prefix (e.g. --sha 1a2b3c4)']],
    [
      '--sha too short',
      '/fluksio run --sha 1a2b3c',
      [
        '--sha "1a2b3c" is not a commit SHA prefix: expected 7 to 64 lowercase hex digits (e.g. --sha 1a2b3c4)',
      ],
    ],
    [
      '--sha too long',
      `/fluksio run --sha ${SHA64}0`,
      [
        `--sha "${SHA64}0" is not a commit SHA prefix: expected 7 to 64 lowercase hex digits (e.g. --sha 1a2b3c4)`,
      ],
    ],
    [
      '--sha in upper case',
      '/fluksio run --sha 1A2B3C4',
      [
        '--sha "1A2B3C4" is not a commit SHA prefix: expected 7 to 64 lowercase hex digits (e.g. --sha 1a2b3c4)',
      ],
    ],
    [
      '--sha that is no hex',
      '/fluksio run --sha main',
      ['--sha "main" is not a commit SHA prefix: expected 7 to 64 lowercase hex digits (e.g. --sha 1a2b3c4)'],
    ],
    [
      '--sha twice',
      '/fluksio run --sha 1a2b3c4 --sha 1a2b3c5',
      ['--sha is given twice; give the one commit to run'],
    ],
    ['a token that is not key=value', '/fluksio run lr', ['"lr" is not key=value (e.g. lr=0.1)']],
    [
      'a param given twice',
      '/fluksio run lr=1 lr=2',
      ["Parameter 'lr' is given twice; for a sweep write lr=a,b"],
    ],
    ['an unterminated quote', '/fluksio run note="open', ['Unterminated " quote in "\\"open"']],
    [
      'every problem at once',
      '/fluksio run --bogus lr --sha nope',
      [
        "Unknown option '--bogus' for /fluksio run; it accepts --no-cache and --sha <prefix>",
        '--sha "nope" is not a commit SHA prefix: expected 7 to 64 lowercase hex digits (e.g. --sha 1a2b3c4)',
        '"lr" is not key=value (e.g. lr=0.1)',
      ],
    ],
    [
      'cancel with two ids',
      '/fluksio cancel 01AB 01CD',
      ['/fluksio cancel takes at most one run id (got 2: 01AB 01CD)'],
    ],
    [
      'cancel with something that is no run id',
      '/fluksio cancel ../etc',
      ['/fluksio cancel: "../etc" is not a run id (letters and digits, e.g. 01J9ZQ4K8M)'],
    ],
    [
      'a flag on cancel is no run id',
      '/fluksio cancel --all',
      ['/fluksio cancel: "--all" is not a run id (letters and digits, e.g. 01J9ZQ4K8M)'],
    ],
  ])('invalid: %s', (_name, body, messages) => {
    const command = parseCommentCommand(body);
    expect(command?.kind).toBe('invalid');
    expect(command?.kind === 'invalid' && command.problems.map((problem) => problem.message)).toEqual(
      messages,
    );
  });

  test.each([
    ['an empty comment', ''],
    ['blank lines only', '\n  \n'],
    ['ordinary discussion', 'LGTM, but can we try /fluksio run lr=0.1?'],
    ['no blank after the prefix', '/fluksiorun lr=0.1'],
    ['the prefix is case-sensitive', '/Fluksio run'],
    ['a command in inline code', '`/fluksio run`'],
    ['a command inside a code block', '```\n/fluksio run\n```'],
    ['a command only in a quote', '> /fluksio run lr=0.1'],
    // GitHub renders a line right after a quoted one as part of the quote (a lazy continuation).
    ['a command continuing a quote', '> Could someone try\n/fluksio run lr=10 seed=1,2,3'],
    ['a command continuing a quote after its first line', '> /fluksio run lr=1\nlr=2\n/fluksio run lr=2'],
    ['a command in an indented code block', '    /fluksio run lr=0.1\n\nis how you run it'],
    ['a command in a tab-indented code block', '\t/fluksio run lr=0.1'],
    ['a command in an indented code block after a quote', '> how?\n\n    /fluksio run lr=0.1'],
    ['a command after a first line of discussion', 'Trying this:\n/fluksio run lr=0.1'],
    ['a long comment that is no command', 'x'.repeat(MAX_COMMENT_LENGTH + 1)],
  ])('not a command: %s', (_name, body) => {
    expect(parseCommentCommand(body)).toBeNull();
  });
});

describe('comment length', () => {
  const command = '/fluksio run lr=0.1\n';

  test('a command comment of exactly 10,000 characters is read', () => {
    const body = command + 'x'.repeat(MAX_COMMENT_LENGTH - command.length);
    expect(body).toHaveLength(10_000);
    expect(parseCommentCommand(body)).toEqual(run([['lr', ['0.1']]]));
  });

  test('a command comment of 10,001 characters is refused with one sentence, its params unread', () => {
    // Were the params parsed, each bad token would be a problem of its own.
    const first = '/fluksio run ' + 'nosuch '.repeat(100);
    const body = `${first}\n${'x'.repeat(MAX_COMMENT_LENGTH - first.length)}`;
    expect(body).toHaveLength(10_001);
    expect(parseCommentCommand(body)).toEqual({
      kind: 'invalid',
      problems: [
        {
          path: '',
          message:
            'The comment is 10,001 characters long; fluksio reads commands from comments of at most 10,000 characters',
        },
      ],
    });
  });
});
