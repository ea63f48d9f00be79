import { execFile } from 'node:child_process';
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { committedFiles } from '../helpers/committed-files.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf, statuses, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

const execFileAsync = promisify(execFile);

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const EXAMPLE_DIR = path.join(import.meta.dirname, '../../examples/logreg');
const EXAMPLE_OUTPUTS = ['data', 'model.json', 'metrics'];

/**
 * examples/logreg as a repository of its own, with a README beside it: its committed files
 * only, so what `npm start` left there (outputs, `.fluksio/`, bytecode) is not taken along.
 */
async function exampleRepo(): Promise<TestRepo> {
  return makeRepo({ files: { 'README.md': '# Logistic regression\n', ...committedFiles(EXAMPLE_DIR) } });
}

const run = async (args: string[] = []) => {
  const result = await runJson(args, { cwd: repo.dir });
  expect(result.report.run.status, `${result.stdout}\n${result.stderr}`).toBe('succeeded');
  return result.report;
};

/** The outputs a cached run left equal those of the same tree run with no cache at all. */
async function expectEqualsUncached(outputs: string[]): Promise<void> {
  const twin = await runUncachedTwin({ dir: repo.dir, outputs });
  expect(twin.report.run.status).toBe('succeeded');
  expect(await snapshotPaths(repo.dir, outputs)).toEqual(twin.outputs);
}

function notesOf(report: RunJson): string[] {
  return report.stages.flatMap((stage) => stage.notes);
}

describe('the example pipeline keys each stage on what it reads', () => {
  test('editing the README re-runs no stage', async () => {
    repo = await exampleRepo();
    await run();
    await repo.write('README.md', '# Logistic regression\n\nNow with a paragraph.\n');
    await repo.commitAll('docs');
    const report = await run();
    expect(statuses(report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    await expectEqualsUncached(EXAMPLE_OUTPUTS);
  });

  test('editing evaluate.py re-runs only evaluate', async () => {
    repo = await exampleRepo();
    await run();
    const source = await readFile(path.join(repo.dir, 'evaluate.py'), 'utf8');
    await repo.write('evaluate.py', source.replace('round(accuracy, 6)', 'round(accuracy, 3)'));
    const report = await run();
    expect(statuses(report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'ran' });
    expect(stageOf(report, 'evaluate').reasons).toEqual(['evaluate.py changed']);
    await expectEqualsUncached(EXAMPLE_OUTPUTS);
  });

  test('editing features.py re-runs train and evaluate: evaluate imports it too', async () => {
    repo = await exampleRepo();
    await run();
    // A comment: train's model comes out the same, so evaluate re-runs for its own import.
    const source = await readFile(path.join(repo.dir, 'features.py'), 'utf8');
    await repo.write('features.py', `${source}\n# a comment\n`);
    const report = await run();
    expect(statuses(report)).toEqual({ prepare: 'cached', train: 'ran', evaluate: 'ran' });
    expect(stageOf(report, 'train').reasons).toEqual(['features.py changed']);
    expect(stageOf(report, 'evaluate').reasons).toEqual(['features.py changed']);
    await expectEqualsUncached(EXAMPLE_OUTPUTS);
  });

  test('a new helper module imported by train re-runs train, and evaluate: its model changed, and a new module could shadow its imports', async () => {
    repo = await exampleRepo();
    await run();
    await repo.write('schedule.py', 'def decay(lr, epoch):\n    return lr / (1 + 0.1 * epoch)\n');
    const source = await readFile(path.join(repo.dir, 'train.py'), 'utf8');
    await repo.write(
      'train.py',
      source
        .replace(
          'from features import load, predict',
          'from features import load, predict\nfrom schedule import decay',
        )
        .replace('w - args.lr * g', 'w - decay(args.lr, epoch) * g'),
    );
    const report = await run();
    expect(statuses(report)).toEqual({ prepare: 'cached', train: 'ran', evaluate: 'ran' });
    expect(stageOf(report, 'evaluate').reasons).toEqual([
      'model.json changed (upstream train re-ran)',
      "modules added to or removed from the pipeline's folder",
    ]);

    await repo.write('schedule.py', 'def decay(lr, epoch):\n    return lr / (1 + 0.2 * epoch)\n');
    const again = await run();
    expect(statuses(again)).toEqual({ prepare: 'cached', train: 'ran', evaluate: 'ran' });
    expect(stageOf(again, 'train').reasons).toEqual(['schedule.py changed']);
    await expectEqualsUncached(EXAMPLE_OUTPUTS);
  });
});

const READER = `version: 1
stages:
  train:
    cmd: python3 train.py
    deps: [train.py]
    outs: [model.txt]
`;

describe('what a Python stage reads is in its key', () => {
  test('an undeclared config file, tracked or ignored, re-runs the stage when edited, and the summary names it', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\nlocal.json\n',
        'fluksio.yml': READER,
        'conf/x.json': '{"scale": 2}\n',
        'local.json': '{"offset": 1}\n',
        'train.py': `import json
scale = json.load(open("conf/x.json"))["scale"]
offset = json.load(open("local.json"))["offset"]
open("model.txt", "w").write(str(scale * 10 + offset) + "\\n")
`,
      },
    });
    const first = await run();
    expect(notesOf(first)).toEqual(['train read conf/x.json and local.json, which are not among its deps']);
    expect((await runJson([], { cwd: repo.dir })).report.stages[0]?.status).toBe('cached');

    await repo.write('conf/x.json', '{"scale": 3}\n');
    const tracked = await run();
    expect(stageOf(tracked, 'train')).toMatchObject({ status: 'ran', reasons: ['conf/x.json changed'] });
    await expectEqualsUncached(['model.txt']);

    await repo.write('local.json', '{"offset": 5}\n');
    const ignored = await run();
    expect(stageOf(ignored, 'train')).toMatchObject({ status: 'ran', reasons: ['local.json changed'] });
    expect(await readFile(path.join(repo.dir, 'model.txt'), 'utf8')).toBe('35\n');
    await expectEqualsUncached(['model.txt']);
  });

  test('a new module that shadows an import re-runs the stage; a new README does not', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\n',
        'fluksio.yml': READER,
        'train.py': `import textwrap
open("model.txt", "w").write(textwrap.dedent("    shaped\\n"))
`,
      },
    });
    await run();
    await repo.write('NOTES.md', 'notes\n');
    expect(statuses(await run())).toEqual({ train: 'cached' });

    await repo.write('textwrap.py', 'def dedent(text):\n    return "shadowed\\n"\n');
    const shadowed = await run();
    expect(stageOf(shadowed, 'train')).toMatchObject({
      status: 'ran',
      reasons: ["modules added to or removed from the pipeline's folder"],
    });
    expect(await readFile(path.join(repo.dir, 'model.txt'), 'utf8')).toBe('shadowed\n');
    await expectEqualsUncached(['model.txt']);
  });

  test('outs in a folder the work tree does not ignore, made by a later stage, never re-run an earlier stage', async () => {
    // `report` writes report/summary.txt after `train` listed the pipeline's folder for its
    // imports; the folder holds only outs (untracked, not ignored), so it is not a module.
    repo = await makeRepo({
      files: {
        'fluksio.yml': [
          'version: 1',
          'stages:',
          '  train:',
          '    cmd: python3 train.py',
          '    outs: [model.txt]',
          '  report:',
          '    cmd: python3 report.py',
          '    deps: [model.txt]',
          '    outs: [report/summary.txt]',
          '',
        ].join('\n'),
        'train.py': 'import textwrap\nopen("model.txt", "w").write(textwrap.dedent("    m\\n"))\n',
        'report.py':
          'import os\nos.makedirs("report", exist_ok=True)\nopen("report/summary.txt", "w").write(open("model.txt").read())\n',
      },
    });
    expect(statuses(await run())).toEqual({ train: 'ran', report: 'ran' });
    expect(statuses(await run())).toEqual({ train: 'cached', report: 'cached' });
    // A module put beside the outs is no out: the folder counts again, and train re-runs.
    await repo.write('report/textwrap.py', 'pass\n');
    await repo.write('textwrap.py', 'def dedent(text):\n    return "shadowed\\n"\n');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    await expectEqualsUncached(['model.txt', 'report/summary.txt']);
  });

  test('a Python subprocess is traced: what it reads is in the key', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\n',
        'fluksio.yml': READER,
        'conf/child.json': '{"n": 1}\n',
        'child.py': 'import json\nprint(json.load(open("conf/child.json"))["n"])\n',
        'train.py': `import subprocess, sys
out = subprocess.run([sys.executable, "child.py"], capture_output=True, text=True, check=True).stdout
open("model.txt", "w").write(out)
`,
      },
    });
    const first = await run();
    expect(notesOf(first)).toEqual(['train read conf/child.json, which is not among its deps']);
    await repo.write('README.md', 'docs\n');
    expect(statuses(await run())).toEqual({ train: 'cached' });

    await repo.write('conf/child.json', '{"n": 2}\n');
    const edited = await run();
    expect(stageOf(edited, 'train')).toMatchObject({ status: 'ran', reasons: ['conf/child.json changed'] });
    await expectEqualsUncached(['model.txt']);
  });

  test('what forked multiprocessing workers read is in the key, though they never run atexit', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\n',
        'fluksio.yml': READER,
        'conf/w.json': '{"w": 1}\n',
        'train.py': `import multiprocessing

def read(_):
    return open("conf/w.json").read()

if __name__ == "__main__":
    with multiprocessing.get_context("fork").Pool(2) as pool:
        out = pool.map(read, [0, 1])
    open("model.txt", "w").write(out[0])
`,
      },
    });
    const first = await run();
    expect(notesOf(first)).toEqual(['train read conf/w.json, which is not among its deps']);
    await repo.write('conf/w.json', '{"w": 2}\n');
    const edited = await run();
    expect(stageOf(edited, 'train')).toMatchObject({ status: 'ran', reasons: ['conf/w.json changed'] });
    await expectEqualsUncached(['model.txt']);
  });

  test('a file read through a link is keyed on what the link leads to', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\n',
        'fluksio.yml': READER,
        'conf/real.json': '1\n',
        'train.py': 'open("model.txt", "w").write(open("conf/link.json").read())\n',
      },
    });
    await symlink('real.json', path.join(repo.dir, 'conf/link.json'));
    await run();
    await repo.write('conf/real.json', '2\n');
    const edited = await run();
    expect(stageOf(edited, 'train')).toMatchObject({ status: 'ran', reasons: ['conf/real.json changed'] });
  });

  test('a stage that starts a program that is not Python falls back to the whole code and says so', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\n',
        'fluksio.yml': READER,
        'conf/x.txt': 'one\n',
        'train.py': `import subprocess
out = subprocess.run(["cat", "conf/x.txt"], capture_output=True, text=True, check=True).stdout
open("model.txt", "w").write(out)
`,
      },
    });
    const first = await run();
    expect(notesOf(first)).toEqual([
      "train: not traced (it started cat): keyed on the repository's whole code",
    ]);
    await repo.write('conf/x.txt', 'two\n');
    const edited = await run();
    expect(stageOf(edited, 'train').status).toBe('ran');
    expect(await readFile(path.join(repo.dir, 'model.txt'), 'utf8')).toBe('two\n');
    await expectEqualsUncached(['model.txt']);
    // Keyed on the whole code, an unrelated file re-runs it; nothing changed, it is a hit.
    expect(statuses(await run())).toEqual({ train: 'cached' });
    await repo.write('README.md', 'docs\n');
    expect(statuses(await run())).toEqual({ train: 'ran' });
  });

  test('a command substitution in a quoted argument or in backquotes is not traced: the file the shell reads re-runs the stage', async () => {
    // Before, `"$(cat VERSION)"` and `` `cat VERSION` `` came out of the command's parse as
    // plain words: the stage was traced, cat's read was never seen, and an edited VERSION
    // restored the result made with the old one.
    repo = await makeRepo({
      files: {
        '.gitignore': 'quoted.txt\nbackquoted.txt\n',
        'fluksio.yml': `version: 1
stages:
  quoted:
    cmd: python3 write.py quoted.txt "$(cat VERSION)"
    outs: [quoted.txt]
  backquoted:
    cmd: python3 write.py backquoted.txt \`cat VERSION\`
    outs: [backquoted.txt]
`,
        'write.py': 'import sys\nopen(sys.argv[1], "w").write(sys.argv[2] + "\\n")\n',
        VERSION: 'v1\n',
      },
    });
    const first = await run();
    expect(notesOf(first)).toEqual([
      "quoted: not traced (the shell runs a command substitution $(…) or `…`): keyed on the repository's whole code",
      "backquoted: not traced (the shell runs a command substitution $(…) or `…`): keyed on the repository's whole code",
    ]);
    await repo.write('VERSION', 'v2\n');
    const edited = await run();
    expect(statuses(edited)).toEqual({ quoted: 'ran', backquoted: 'ran' });
    expect(stageOf(edited, 'quoted').reasons).toEqual(['VERSION changed']);
    await expectEqualsUncached(['quoted.txt', 'backquoted.txt']);
    expect(await readFile(path.join(repo.dir, 'quoted.txt'), 'utf8')).toBe('v2\n');
  });

  test('a file the stage read that changed while it ran leaves its result uncached', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\n',
        'fluksio.yml': READER,
        'counter.txt': '0\n',
        'train.py': `n = int(open("counter.txt").read())
open("counter.txt", "w").write(str(n + 1) + "\\n")
open("model.txt", "w").write(str(n) + "\\n")
`,
      },
    });
    const first = await run();
    expect(stageOf(first, 'train')).toMatchObject({ status: 'ran', cacheKey: null });
    expect(notesOf(first)).toContain('train: not cached: counter.txt changed while it ran');
    expect(statuses(await run())).toEqual({ train: 'ran' });
  });

  test('a file opened to append and then read is an input: what was in it is keyed; a stage that only appends stays cached', async () => {
    // Before, any file a process opened for writing was its own data, never an input, also
    // when the open kept its bytes (append, no truncation): a hand-edited history.log
    // restored the count made from the old one.
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\nhistory.log\nlog.txt\ntrain.log\n',
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: python3 train.py
    outs: [model.txt]
  log:
    cmd: python3 log.py
    outs: [log.txt]
`,
        'train.py': `with open("history.log", "a") as history:
    history.write("run\\n")
n = len(open("history.log").read().splitlines())
open("model.txt", "w").write(str(n) + "\\n")
`,
        'log.py': `import logging
logging.basicConfig(filename="train.log", level=logging.INFO)
logging.info("training")
open("log.txt", "w").write("done\\n")
`,
      },
    });
    const first = await run();
    expect(stageOf(first, 'train')).toMatchObject({ status: 'ran', cacheKey: null });
    expect(notesOf(first)).toContain('train: not cached: history.log changed while it ran');
    expect(stageOf(first, 'log').cacheKey).not.toBeNull();

    await repo.write('history.log', 'a\nb\nc\nd\ne\n');
    const edited = await run();
    expect(statuses(edited)).toEqual({ train: 'ran', log: 'cached' });
    expect(await readFile(path.join(repo.dir, 'model.txt'), 'utf8')).toBe('6\n');
  });

  test('a SQLite database the stage reads is in its key, though SQLite opens it natively', async () => {
    // Before, sqlite3 read the file past the open hook: rows added to an ignored database
    // restored the count made from the old rows.
    repo = await makeRepo({
      files: {
        '.gitignore': 'model.txt\ndata/\n',
        'fluksio.yml': READER,
        'train.py': `import sqlite3
rows = sqlite3.connect("data/features.db").execute("select count(*) from f").fetchone()[0]
open("model.txt", "w").write(str(rows) + "\\n")
`,
      },
    });
    const addRow = () =>
      execFileAsync(
        'python3',
        [
          '-c',
          'import os, sqlite3\nos.makedirs("data", exist_ok=True)\nwith sqlite3.connect("data/features.db") as db:\n    db.executescript("create table if not exists f (x); insert into f values (1);")\n',
        ],
        { cwd: repo.dir },
      );
    await addRow();
    const first = await run();
    expect(notesOf(first)).toEqual(['train read data/features.db, which is not among its deps']);
    expect(statuses(await run())).toEqual({ train: 'cached' });

    await addRow();
    const edited = await run();
    expect(stageOf(edited, 'train')).toMatchObject({ status: 'ran', reasons: ['data/features.db changed'] });
    expect(await readFile(path.join(repo.dir, 'model.txt'), 'utf8')).toBe('2\n');
  });
});

describe('stages that are not Python', () => {
  test('a Node or shell stage is keyed on the whole code, and the summary says so', async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': 'out/\n',
        'fluksio.yml': `version: 1
stages:
  bundle:
    cmd: node -e "require('fs').mkdirSync('out',{recursive:true});require('fs').writeFileSync('out/a.txt', require('fs').readFileSync('src.txt'))"
    outs: [out/a.txt]
  report:
    cmd: cat src.txt > out/b.txt
    deps: [out/a.txt]
    outs: [out/b.txt]
`,
        'src.txt': 'source\n',
      },
    });
    const first = await run();
    expect(notesOf(first)).toEqual([
      "bundle: not traced (node is not Python): keyed on the repository's whole code",
      "report: not traced (cat is not Python): keyed on the repository's whole code",
    ]);
    // Restored from the cache, the summary still says how the stages are keyed.
    const summary = await runCli(['run'], { cwd: repo.dir });
    expect(summary.stdout).toMatch(/bundle\s+● cached/);
    expect(summary.stdout).toContain(
      "bundle: not traced (node is not Python): keyed on the repository's whole code",
    );

    await repo.write('README.md', 'docs\n');
    const edited = await run();
    expect(statuses(edited)).toEqual({ bundle: 'ran', report: 'ran' });
    await expectEqualsUncached(['out']);
  });
});
