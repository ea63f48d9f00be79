import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, test } from 'vitest';
import {
  innermostRepoFrame,
  parseTracebacks,
  repoRelativePath,
  type ParsedTraceback,
} from '../../core/traceback.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

const WHERE = { cwd: '/repo/ml', repoRoot: '/repo' };

function parse(text: string, where = WHERE): ParsedTraceback[] {
  return parseTracebacks(text.split('\n'), where);
}

/** `path:line` of each frame, most recent call last; `-` for frames outside the repository. */
function framesOf(traceback: ParsedTraceback | undefined): string[] {
  return (traceback?.frames ?? []).map((frame) =>
    frame.path === null ? '-' : `${frame.path}:${frame.line}`,
  );
}

describe('repoRelativePath', () => {
  test.each([
    { file: 'train.py', path: 'ml/train.py' },
    { file: './src/../train.py', path: 'ml/train.py' },
    { file: '../prepare.py', path: 'prepare.py' },
    { file: '/repo/ml/train.py', path: 'ml/train.py' },
    { file: 'file:///repo/web/app%20v2.mjs', path: 'web/app v2.mjs' },
    { file: '/usr/lib/python3.11/json/decoder.py', path: null },
    { file: '/repository/x.py', path: null },
    { file: '../../etc/passwd', path: null },
    { file: '/repo', path: null },
    { file: 'node:internal/modules/cjs/loader', path: null },
    { file: '<frozen importlib._bootstrap>', path: null },
    { file: '<string>', path: null },
    { file: '[eval]', path: null },
  ])('$file → $path', ({ file, path }) => {
    expect(repoRelativePath(file, WHERE)).toBe(path);
  });
});

describe('parseTracebacks on Python output', () => {
  test.each([
    {
      case: 'a plain traceback, with the code and caret lines of 3.11',
      text: `epoch 1
Traceback (most recent call last):
  File "/repo/ml/train.py", line 9, in <module>
    main()
  File "/repo/ml/pkg/mod.py", line 2, in inner
    return x / 0
           ~~^~~
ZeroDivisionError: division by zero
after`,
      message: 'ZeroDivisionError: division by zero',
      frames: ['ml/train.py:9', 'ml/pkg/mod.py:2'],
    },
    {
      case: 'relative paths (python -c) and frames outside the repository',
      text: `Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "pkg/mod.py", line 4, in load
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)`,
      message: 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
      frames: ['-', 'ml/pkg/mod.py:4', '-'],
    },
    {
      case: 'a SyntaxError frame has no function',
      text: `Traceback (most recent call last):
  File "/repo/ml/train.py", line 1, in <module>
    import bad
  File "/repo/ml/bad.py", line 1
    x = = 1
        ^
SyntaxError: invalid syntax`,
      message: 'SyntaxError: invalid syntax',
      frames: ['ml/train.py:1', 'ml/bad.py:1'],
    },
    {
      case: 'recursion, with its repeated-line note',
      text: `Traceback (most recent call last):
  File "/repo/ml/r.py", line 3, in f
    return f()
           ^^^
  [Previous line repeated 996 more times]
RecursionError: maximum recursion depth exceeded`,
      message: 'RecursionError: maximum recursion depth exceeded',
      frames: ['ml/r.py:3'],
    },
    {
      case: 'an exception without a message',
      text: `Traceback (most recent call last):
  File "/repo/ml/train.py", line 5, in <module>
    time.sleep(10)
KeyboardInterrupt`,
      message: 'KeyboardInterrupt',
      frames: ['ml/train.py:5'],
    },
  ])('$case', ({ text, message, frames }) => {
    const [traceback, ...others] = parse(text);
    expect(others).toEqual([]);
    expect(traceback?.language).toBe('python');
    expect(traceback?.message).toBe(message);
    expect(framesOf(traceback)).toEqual(frames);
    expect(traceback?.text.split('\n')[0]).toBe('Traceback (most recent call last):');
    expect(traceback?.text.split('\n').at(-1)).toBe(message);
  });

  test.each([
    'During handling of the above exception, another exception occurred:',
    'The above exception was the direct cause of the following exception:',
  ])('a chain linked by "%s" reports its last exception, with the whole chain as text', (link) => {
    const text = `Traceback (most recent call last):
  File "/repo/ml/pkg/mod.py", line 2, in inner
    return x / 0
ZeroDivisionError: division by zero

${link}

Traceback (most recent call last):
  File "/repo/ml/train.py", line 7, in main
    raise ValueError("bad value") from e
ValueError: bad value`;
    const tracebacks = parse(text);
    expect(tracebacks).toHaveLength(1);
    expect(tracebacks[0]?.message).toBe('ValueError: bad value');
    expect(framesOf(tracebacks[0])).toEqual(['ml/train.py:7']);
    expect(tracebacks[0]?.text).toBe(text);
  });

  test('two unrelated tracebacks are both reported', () => {
    const text = `Traceback (most recent call last):
  File "/repo/ml/a.py", line 1, in <module>
KeyError: 'x'
retrying
Traceback (most recent call last):
  File "/repo/ml/b.py", line 2, in <module>
IndexError: list index out of range`;
    expect(parse(text).map((traceback) => traceback.message)).toEqual([
      "KeyError: 'x'",
      'IndexError: list index out of range',
    ]);
  });

  test('an exception group reports the group with its own frames', () => {
    const text = `  + Exception Group Traceback (most recent call last):
  |   File "/repo/ml/eg.py", line 3, in <module>
  |     f()
  |   File "/repo/ml/eg.py", line 2, in f
  |     raise ExceptionGroup("several", [ValueError("a"), TypeError("b")])
  | ExceptionGroup: several (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | ValueError: a
    +---------------- 2 ----------------
    | TypeError: b
    +------------------------------------
done`;
    const [traceback, ...others] = parse(text);
    expect(others).toEqual([]);
    expect(traceback?.message).toBe('ExceptionGroup: several (2 sub-exceptions)');
    expect(framesOf(traceback)).toEqual(['ml/eg.py:3', 'ml/eg.py:2']);
    expect(traceback?.text).toBe(text.slice(0, text.lastIndexOf('\ndone')));
  });

  test('a traceback cut off before its exception line is not reported', () => {
    expect(parse('Traceback (most recent call last):\n  File "/repo/ml/a.py", line 1, in <module>')).toEqual(
      [],
    );
    expect(
      parse('Traceback (most recent call last):\n  File "/repo/ml/a.py", line 1, in <module>\n\nx'),
    ).toEqual([]);
  });
});

describe('parseTracebacks on Node output', () => {
  test.each([
    {
      case: 'an uncaught error in CommonJS',
      text: `/repo/ml/lib/inner.js:2
  if (x) throw new TypeError("bad x: " + x);
         ^

TypeError: bad x: 3
    at inner (/repo/ml/lib/inner.js:2:16)
    at main (/repo/ml/main.js:2:19)
    at Object.<anonymous> (/repo/ml/main.js:3:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.2`,
      message: 'TypeError: bad x: 3',
      frames: ['-', '-', '-', 'ml/main.js:3', 'ml/main.js:2', 'ml/lib/inner.js:2'],
      functions: [
        null,
        'Function.executeUserEntryPoint [as runMain]',
        'Module._compile',
        'Object.<anonymous>',
        'main',
        'inner',
      ],
    },
    {
      case: 'ES modules, async frames and error properties',
      text: `Error: ENOENT: no such file or directory, open '/nonexistent'
    at async open (node:internal/fs/promises:637:25)
    at async main (file:///repo/ml/m.mjs:2:25)
    at async file:///repo/ml/m.mjs:3:1 {
  errno: -2,
  code: 'ENOENT'
}`,
      message: "Error: ENOENT: no such file or directory, open '/nonexistent'",
      frames: ['ml/m.mjs:3', 'ml/m.mjs:2', '-'],
      functions: [null, 'main', 'open'],
    },
    {
      case: 'a cause is part of its error, not an error of its own',
      text: `Error: outer
    at Object.<anonymous> (/repo/ml/c.js:1:11)
    ... 4 lines matching cause stack trace ...
    at node:internal/main/run_main_module:28:49 {
  [cause]: RangeError: inner
      at Object.<anonymous> (/repo/ml/c.js:1:39)
      at node:internal/main/run_main_module:28:49
}`,
      message: 'Error: outer',
      frames: ['-', 'ml/c.js:1'],
      functions: [null, 'Object.<anonymous>'],
    },
    {
      case: 'a message of several lines, and a code in brackets',
      text: `AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

1 !== 2
    at check (/repo/ml/test.js:4:10)`,
      message: 'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
      frames: ['ml/test.js:4'],
      functions: ['check'],
    },
    {
      case: 'a multi-line message right above the frames',
      text: `Error: multi
line message
    at [eval]:1:7
    at new Trainer (/repo/ml/t.js:8:3)`,
      message: 'Error: multi',
      frames: ['ml/t.js:8', '-'],
      functions: ['new Trainer', null],
    },
  ])('$case', ({ text, message, frames, functions }) => {
    const [traceback, ...others] = parse(text);
    expect(others).toEqual([]);
    expect(traceback?.language).toBe('node');
    expect(traceback?.message).toBe(message);
    expect(framesOf(traceback)).toEqual(frames);
    expect(traceback?.frames.map((frame) => frame.function)).toEqual(functions);
  });

  test('frames under no error line are not a traceback', () => {
    expect(parse('progress 10%\n\n    at some point (/repo/ml/x.js:1:1)')).toEqual([]);
  });
});

describe('innermostRepoFrame', () => {
  test.each([
    { frames: ['ml/train.py', 'ml/pkg/mod.py', null], innermost: 'ml/pkg/mod.py' },
    { frames: ['ml/train.py', '.venv/lib/python3.11/site-packages/torch/nn.py'], innermost: 'ml/train.py' },
    { frames: ['web/main.js', 'node_modules/lodash/x.js'], innermost: 'web/main.js' },
    { frames: [null, null], innermost: null },
  ])('$frames → $innermost', ({ frames, innermost }) => {
    const traceback: ParsedTraceback = {
      language: 'python',
      message: 'E',
      text: '',
      frames: frames.map((path, line) => ({ path, absPath: `/x/${path}`, line: line + 1, function: null })),
    };
    expect(innermostRepoFrame(traceback)?.path ?? null).toBe(innermost);
  });
});

describe('real tracebacks', () => {
  let repo: TestRepo;
  afterEach(async () => repo.cleanup());

  /** Runs a command in the pipeline directory `ml/` and parses its stderr. */
  function run(command: string, args: string[]): ParsedTraceback[] {
    const cwd = `${repo.dir}/ml`;
    const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
    expect(result.status).toBe(1);
    return parseTracebacks(result.stderr.split('\n'), { cwd, repoRoot: repo.dir });
  }

  test('python3: an exception raised in a nested module points at that module, relative to the repository', async () => {
    repo = await makeRepo({
      commit: false,
      files: {
        'ml/pkg/__init__.py': '',
        'ml/pkg/mod.py': 'def inner(x):\n    return x / 0\n',
        'ml/train.py': 'from pkg.mod import inner\n\n\ndef main():\n    inner(1)\n\n\nmain()\n',
      },
    });
    const [traceback, ...others] = run('python3', ['train.py']);
    expect(others).toEqual([]);
    expect(traceback?.message).toBe('ZeroDivisionError: division by zero');
    expect(framesOf(traceback)).toEqual(['ml/train.py:8', 'ml/train.py:5', 'ml/pkg/mod.py:2']);
    expect(innermostRepoFrame(traceback!)).toMatchObject({
      path: 'ml/pkg/mod.py',
      line: 2,
      function: 'inner',
    });
  });

  test('python3: a chained exception reports the one that ended the program', async () => {
    repo = await makeRepo({
      commit: false,
      files: {
        'ml/train.py':
          'import json\n\ntry:\n    json.loads("{")\nexcept ValueError as e:\n    raise RuntimeError("bad config") from e\n',
      },
    });
    const [traceback, ...others] = run('python3', ['train.py']);
    expect(others).toEqual([]);
    expect(traceback?.message).toBe('RuntimeError: bad config');
    expect(innermostRepoFrame(traceback!)).toMatchObject({ path: 'ml/train.py', line: 6 });
    expect(traceback?.text).toContain('The above exception was the direct cause of the following exception:');
  });

  test('node: a thrown error points at the innermost repository frame, past node:internal', async () => {
    repo = await makeRepo({
      commit: false,
      files: {
        'ml/lib/inner.js':
          'function inner(x) {\n  if (x) throw new TypeError("bad x: " + x);\n}\nmodule.exports = { inner };\n',
        'ml/main.js':
          'const { inner } = require("./lib/inner.js");\nfunction main() {\n  inner(3);\n}\nmain();\n',
      },
    });
    const [traceback, ...others] = run('node', ['main.js']);
    expect(others).toEqual([]);
    expect(traceback?.message).toBe('TypeError: bad x: 3');
    expect(framesOf(traceback).filter((frame) => frame !== '-')).toEqual([
      'ml/main.js:5',
      'ml/main.js:3',
      'ml/lib/inner.js:2',
    ]);
    expect(traceback?.frames.some((frame) => frame.absPath.startsWith('node:internal'))).toBe(true);
    expect(innermostRepoFrame(traceback!)).toMatchObject({
      path: 'ml/lib/inner.js',
      line: 2,
      function: 'inner',
    });
  });

  test('node: an ES module rejection is parsed through its file:// frames', async () => {
    repo = await makeRepo({
      commit: false,
      files: {
        'ml/app.mjs': 'async function load() {\n  throw new RangeError("no data");\n}\nawait load();\n',
      },
    });
    const [traceback] = run('node', ['app.mjs']);
    expect(traceback?.message).toBe('RangeError: no data');
    expect(innermostRepoFrame(traceback!)).toMatchObject({ path: 'ml/app.mjs', line: 2, function: 'load' });
  });
});
