import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, realpath, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf, statuses } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

const exec = promisify(execFile);
/** Each test runs fluksio several times and an uncached twin; a loaded 2-core machine needs the room. */
const SLOW = 240_000;

let repo: TestRepo;
const scratch: string[] = [];
afterEach(async () => {
  await repo?.cleanup();
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

const run = (args: string[] = [], env: Record<string, string | undefined> = {}) =>
  runJson(args, { cwd: repo.dir, env });

/** The workspace's outputs equal those of `fluksio run --no-cache` on a copy of the tree as it is now. */
async function expectSameAsUncached(
  outputs: string[],
  env: Record<string, string | undefined> = {},
  args: string[] = [],
) {
  const twin = await runUncachedTwin({ dir: repo.dir, outputs, env, args });
  expect(twin.report.run.status).toBe('succeeded');
  expect(await snapshotPaths(repo.dir, outputs)).toEqual(twin.outputs);
}

/** Waits for a condition the test cannot be told about otherwise (a file a stage writes). */
async function waitUntil(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting: ${what}`);
    await new Promise((wake) => setTimeout(wake, 20));
  }
}

/** Python that signals it started (`<name>.started`) and waits until the test creates `<name>.go`. */
const waitForGo = (name: string) => `import os, sys, time
open("${name}.started", "w").close()
deadline = time.time() + 90
while not os.path.exists("${name}.go"):
    if time.time() > deadline:
        sys.exit("nobody said go")
    time.sleep(0.02)
`;

describe('edits during a run (defect 1)', () => {
  const files = {
    '.gitignore': '*.started\n*.go\n/first.txt\n/second.txt\n/out.txt\n',
    'fluksio.yml': `version: 1
stages:
  first:
    cmd: python3 first.py
    deps: [first.py]
    outs: [first.txt]
    code: false
  second:
    cmd: python3 second.py
    deps: [second.py, first.txt]
    outs: [second.txt]
`,
    'first.py': `${waitForGo('first')}open("first.txt", "w").write("first\\n")
`,
    'second.py': `from helper import VALUE
open("second.txt", "w").write(f"second saw {VALUE}\\n")
`,
    'helper.py': 'VALUE = "committed"\n',
  };

  test(
    'a file edited while an earlier stage runs is keyed as the later stage reads it, and the run is dirty',
    async () => {
      repo = await makeRepo({ files });
      const running = run();
      await waitUntil(() => existsSync(join(repo.dir, 'first.started')), 'first started');
      await repo.write('helper.py', 'VALUE = "edited during the run"\n');
      await writeFile(join(repo.dir, 'first.go'), '');
      const { report } = await running;

      expect(statuses(report)).toEqual({ first: 'ran', second: 'ran' });
      expect(await readFile(join(repo.dir, 'second.txt'), 'utf8')).toBe('second saw edited during the run\n');
      // first's key does not cover helper.py (code: false), so its result stands; the run
      // executed two versions of the code, so its stamp cannot say "clean".
      expect(stageOf(report, 'first').dirtyReasons).toEqual([]);
      expect(report.run.dirty).toBe(true);
      expect(report.run.dirtyReasons).toEqual(['code changed while first ran: helper.py changed']);
      await expectSameAsUncached(['first.txt', 'second.txt']);

      // Reverting the edit must never restore the edited code's output as the committed code's.
      await repo.git('checkout', '--', 'helper.py');
      const reverted = await run();
      expect(stageOf(reverted.report, 'second').status).toBe('ran');
      expect(await readFile(join(repo.dir, 'second.txt'), 'utf8')).toBe('second saw committed\n');
      expect(reverted.report.run).toMatchObject({ dirty: false, dirtyReasons: [] });
      await expectSameAsUncached(['first.txt', 'second.txt']);
    },
    SLOW,
  );

  test(
    'a key input edited while its stage runs: the result is not cached, and the run says why',
    async () => {
      repo = await makeRepo({
        files: {
          ...files,
          'fluksio.yml': `version: 1
stages:
  train:
    cmd: python3 train.py
    deps: [train.py]
    outs: [out.txt]
`,
          // It imports the helper only once told to go, after the edit: what its key said is not what it read.
          'train.py': `${waitForGo('train')}from helper import VALUE
open("out.txt", "w").write(f"trained with {VALUE}\\n")
`,
        },
      });
      const running = run();
      await waitUntil(() => existsSync(join(repo.dir, 'train.started')), 'train started');
      await repo.write('helper.py', 'VALUE = "edited during the run"\n');
      await writeFile(join(repo.dir, 'train.go'), '');
      const { report } = await running;
      expect(stageOf(report, 'train')).toMatchObject({
        status: 'ran',
        dirtyReasons: ['code changed while train ran: helper.py changed'],
      });
      expect(report.run.dirty).toBe(true);
      expect(report.run.dirtyReasons).toEqual(['code changed while train ran: helper.py changed']);

      await repo.git('checkout', '--', 'helper.py');
      const reverted = await run();
      expect(stageOf(reverted.report, 'train').status).toBe('ran');
      expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('trained with committed\n');
      await expectSameAsUncached(['out.txt']);
    },
    SLOW,
  );

  test(
    'a run that waited for the store runs the pipeline and the code as they are once it has it',
    async () => {
      repo = await makeRepo({ files });
      const holding = run();
      await waitUntil(() => existsSync(join(repo.dir, 'first.started')), 'first started');
      // This run reads its input now, then waits for the store the first run holds.
      const waiting = run();
      await repo.write('helper.py', 'VALUE = "edited while the second run waited"\n');
      await writeFile(join(repo.dir, 'first.go'), '');
      const [held, waited] = await Promise.all([holding, waiting]);
      expect(held.report.run.status).toBe('succeeded');

      const after = await run();
      expect(statuses(after.report)).toEqual({ first: 'cached', second: 'cached' });
      expect(waited.report.run).toMatchObject({
        commit: after.report.run.commit,
        codeDigest: after.report.run.codeDigest,
        dirty: true,
        dirtyReasons: [],
      });
      expect(await readFile(join(repo.dir, 'second.txt'), 'utf8')).toBe(
        'second saw edited while the second run waited\n',
      );
      await expectSameAsUncached(['first.txt', 'second.txt']);
    },
    SLOW,
  );
});

describe('the inherited environment (defect 5)', () => {
  test(
    'a result made under one locale, time zone and home is the result under any other',
    async () => {
      repo = await makeRepo({
        files: {
          '.gitignore': '/out.txt\n',
          'fluksio.yml': `version: 1
stages:
  report:
    cmd: python3 report.py
    deps: [report.py]
    outs: [out.txt]
`,
          'report.py': `import locale, os, time
locale.setlocale(locale.LC_ALL, "")
home = os.path.expanduser("~")
open("out.txt", "w").write(
    f"{locale.getlocale()} {time.strftime('%Z', time.localtime(0))} {os.environ.get('TERM')} "
    f"home-is-the-user's={home == '${process.env.HOME ?? ''}'} home-exists={os.path.isdir(home)}\\n"
)
`,
        },
      });
      const berlin = { TZ: 'Europe/Berlin', LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8', TERM: 'xterm' };
      const first = await run([], berlin);
      expect(stageOf(first.report, 'report').status).toBe('ran');
      // A de_DE locale, which this machine may not even have, never reached the stage.
      expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toMatch(
        /^\('\w+', 'UTF-8'\) UTC dumb home-is-the-user's=False home-exists=True\n$/,
      );

      const newYork = { TZ: 'America/New_York', LANG: 'en_US.UTF-8', LC_ALL: undefined, TERM: 'screen' };
      const second = await run([], newYork);
      expect(stageOf(second.report, 'report').status).toBe('cached');
      await expectSameAsUncached(['out.txt'], newYork);
    },
    SLOW,
  );

  test(
    'another python3 first on PATH is another key, and the reason names it',
    async () => {
      const bin = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-bin-')));
      scratch.push(bin);
      // The interpreter itself, not a launcher script such as pyenv's shim.
      const realPython = await realpath(
        (await exec('python3', ['-c', 'import sys; print(sys.executable)'])).stdout.trim(),
      );
      await symlink(realPython, join(bin, 'python3'));
      const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
      repo = await makeRepo({
        files: {
          '.gitignore': '/out.txt\n',
          'fluksio.yml': `version: 1
stages:
  make:
    cmd: python3 make.py
    deps: [make.py]
    outs: [out.txt]
`,
          'make.py': 'import sys\nopen("out.txt", "w").write(f"made by {sys.implementation.name}\\n")\n',
        },
      });
      const first = await run([], env);
      expect(stageOf(first.report, 'make').status).toBe('ran');
      expect(await run([], env)).toMatchObject({ report: { stages: [{ name: 'make', status: 'cached' }] } });

      // Same PATH, another program behind the same name.
      await rm(join(bin, 'python3'));
      await writeFile(join(bin, 'python3'), '#!/bin/sh\necho "made by another python3" > out.txt\n');
      await chmod(join(bin, 'python3'), 0o755);
      const second = await run([], env);
      expect(stageOf(second.report, 'make')).toMatchObject({
        status: 'ran',
        // The script's #! line names what really runs it: that is keyed too.
        reasons: [
          `now starts /bin/sh (${await realpath('/bin/sh')})`,
          `python3 is now ${bin}/python3 (was ${realPython})`,
          // A script named python3 is asked which Python it starts (as pyenv's shim would answer).
          'now starts python3 (what its launcher starts) (it named no Python)',
        ],
      });
      expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('made by another python3\n');
      await expectSameAsUncached(['out.txt'], env);

      // Its bytes change, not its path: still another key.
      await writeFile(join(bin, 'python3'), '#!/bin/sh\necho "made by a newer python3" > out.txt\n');
      const third = await run([], env);
      expect(stageOf(third.report, 'make')).toMatchObject({
        status: 'ran',
        reasons: [`python3 (${bin}/python3) changed`],
      });
      await expectSameAsUncached(['out.txt'], env);
    },
    SLOW,
  );
});

describe('stale bytecode (defect 6)', () => {
  // As a user's shell has it: Python reads and writes __pycache__ beside the sources.
  const pythonWritingBytecode = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PYTHON')),
  );

  test(
    'a same-size edit whose mtime is put back never runs the bytecode of the old source',
    async () => {
      repo = await makeRepo({
        files: {
          '.gitignore': '/out.txt\n__pycache__/\n',
          'fluksio.yml': `version: 1
stages:
  main:
    cmd: python3 main.py
    deps: [main.py]
    outs: [out.txt]
`,
          'main.py': 'from helper import VALUE\nopen("out.txt", "w").write(f"{VALUE}\\n")\n',
          'helper.py': 'VALUE = 1\n',
        },
      });
      // The user ran the code by hand: __pycache__/helper.*.pyc sits beside the source.
      await exec('python3', ['-c', 'import helper'], { cwd: repo.dir, env: pythonWritingBytecode });
      expect(await run()).toMatchObject({ report: { stages: [{ status: 'ran' }] } });
      expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('1\n');

      const helper = join(repo.dir, 'helper.py');
      const before = await stat(helper);
      await writeFile(helper, 'VALUE = 2\n');
      await utimes(helper, before.atime, before.mtime);
      // What the test guards against: Python alone trusts the old bytecode.
      expect(
        (await exec('python3', ['-c', 'import helper; print(helper.VALUE)'], { cwd: repo.dir })).stdout,
      ).toBe('1\n');

      const edited = await run();
      expect(stageOf(edited.report, 'main')).toMatchObject({ status: 'ran', reasons: ['helper.py changed'] });
      expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('2\n');
      await expectSameAsUncached(['out.txt']);
    },
    SLOW,
  );
});

describe('why it re-ran (defect 9)', () => {
  const files = {
    '.gitignore': '/out.txt\n',
    'fluksio.yml': `version: 1
params:
  lr: { type: float, default: 1 }
  s: { type: int, default: 1 }
env: [MYVAR]
stages:
  train:
    cmd: python3 train.py \${lr} \${s}
    deps: [train.py]
    params: [lr, s]
    outs: [out.txt]
`,
    'train.py':
      'import os, sys\nopen("out.txt", "w").write(f"{sys.argv[1:]} {os.environ.get(\'MYVAR\')}\\n")\n',
  };

  test(
    'reasons compare with the previous run, not with the newest cache entry',
    async () => {
      repo = await makeRepo({ files });
      const env = { MYVAR: 'a' };
      await run(['lr=1', 's=1'], env);
      await run(['lr=0.5', 's=1'], env);
      expect(stageOf((await run(['lr=1', 's=1'], env)).report, 'train').status).toBe('cached');
      const onlyS = await run(['lr=1', 's=2'], env);
      expect(stageOf(onlyS.report, 'train')).toMatchObject({ status: 'ran', reasons: ['s 1 → 2'] });
      await expectSameAsUncached(['out.txt'], env, ['lr=1', 's=2']);
    },
    SLOW,
  );

  test(
    'a command edit is named as such, and an env change that did not happen is not',
    async () => {
      repo = await makeRepo({ files });
      await run([], { MYVAR: 'a' });
      await run([], { MYVAR: 'b' });
      expect(stageOf((await run([], { MYVAR: 'a' })).report, 'train').status).toBe('cached');
      await repo.write('fluksio.yml', files['fluksio.yml'].replace('${lr} ${s}', '${s} ${lr}'));
      const edited = await run([], { MYVAR: 'a' });
      expect(stageOf(edited.report, 'train')).toMatchObject({
        status: 'ran',
        // train is traced: it never read fluksio.yml, so only its command is named.
        reasons: ['command changed'],
      });
      const envOnly = await run([], { MYVAR: 'c' });
      expect(stageOf(envOnly.report, 'train')).toMatchObject({
        status: 'ran',
        reasons: ['env MYVAR changed'],
      });
      await expectSameAsUncached(['out.txt'], { MYVAR: 'c' });
    },
    SLOW,
  );
});

describe('undeclared writes (defect 10)', () => {
  test(
    'a stage writing an untracked file it does not declare is named, with the fix',
    async () => {
      repo = await makeRepo({
        files: {
          '.gitignore': '/out.txt\n',
          'fluksio.yml': `version: 1
stages:
  train:
    cmd: python3 train.py
    deps: [train.py]
    outs: [out.txt]
`,
          'train.py':
            'import time\nopen("out.txt", "w").write("model\\n")\nopen("debug.log", "w").write(f"{time.time_ns()}\\n")\n',
        },
      });
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const { report } = await runJson([], { cwd: repo.dir });
        const train = stageOf(report, 'train');
        expect(train.status).toBe('ran');
        expect(train.warnings).toEqual([
          "train wrote debug.log (or it changed while it ran), which is neither an out nor ignored: declare it in train's outs, or add it to .gitignore — otherwise every later run is dirty and misses the cache",
        ]);
        expect(train.dirtyReasons).toEqual([
          `code changed while train ran: debug.log ${attempt === 0 ? 'added' : 'changed'}`,
        ]);
      }
      const summary = await runCli(['run'], { cwd: repo.dir });
      const warnings = summary.stdout.split('\nWarnings\n')[1] ?? '';
      expect(warnings).toContain('! train wrote debug.log (or it changed while it ran)');

      // The fix the warning gives works: ignored, the file no longer matters.
      await repo.write('.gitignore', '/out.txt\n/debug.log\n');
      expect(stageOf((await run()).report, 'train')).toMatchObject({
        status: 'ran',
        warnings: [],
        dirtyReasons: [],
      });
      const clean = await run();
      expect(clean.report.run.dirty).toBe(true); // .gitignore itself is an uncommitted change
      expect(stageOf(clean.report, 'train')).toMatchObject({ status: 'cached', warnings: [] });
      await expectSameAsUncached(['out.txt']);
    },
    SLOW,
  );
});
