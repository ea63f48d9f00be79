import { execFile } from 'node:child_process';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { RACY_WINDOW_MS } from '../../runner/keys/stat-cache.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf, statuses } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

const exec = promisify(execFile);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function project(files: Record<string, string>, executables: string[] = []): Promise<TestRepo> {
  const made = await makeRepo({ files, commit: false });
  cleanups.push(made.cleanup);
  for (const file of executables) await chmod(path.join(made.dir, file), 0o755);
  await made.commitAll('initial');
  return made;
}

type Run = Awaited<ReturnType<typeof runJson>>;

async function run(made: TestRepo, args: string[] = []): Promise<Run> {
  const result = await runJson(args, { cwd: made.dir });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/**
 * The promise the whole file checks: what a run left at `outputs`, and its stamp, are
 * what a run of the same tree with no cache at all leaves and says.
 */
async function expectSameAsUncached(made: TestRepo, result: Run, outputs: string[], args: string[] = []) {
  const twin = await runUncachedTwin({ dir: made.dir, outputs, args });
  expect(await snapshotPaths(made.dir, outputs)).toEqual(twin.outputs);
  expect(result.report.run.status).toBe(twin.report.run.status);
  expect(result.report.run.codeDigest).toBe(twin.report.run.codeDigest);
  expect(result.report.run.dirty).toBe(twin.report.run.dirty);
}

/** Waits until a file was last changed longer ago than the stat cache's racy window. */
async function waitUntilSettled(file: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const { ctimeMs, mtimeMs } = await stat(file);
      expect(Date.now() - Math.max(ctimeMs, mtimeMs)).toBeGreaterThan(RACY_WINDOW_MS);
    },
    { timeout: 5 * RACY_WINDOW_MS, interval: 100 },
  );
}

describe('file modes', () => {
  const files = {
    '.gitignore': 'mode.txt\ngen.txt\n',
    'tool.sh': '#!/bin/sh\necho runnable\n',
    'gen.sh': '#!/bin/sh\necho generated\n',
    'fluksio.yml': `version: 1
stages:
  mode:
    cmd: 'if [ -x tool.sh ]; then ./tool.sh; else echo "tool.sh is not executable"; fi > mode.txt'
    outs: [mode.txt]
  dep:
    cmd: 'if [ -x gen.sh ]; then ./gen.sh; else echo "gen.sh is not executable"; fi > gen.txt'
    deps: [gen.sh]
    outs: [gen.txt]
    code: false
`,
  };

  test('dropping +x from a script re-runs the stages it is code or a dep of; restoring it finds the cache', async () => {
    const made = await project(files, ['tool.sh', 'gen.sh']);
    const first = await run(made);
    expect(statuses(first.report)).toEqual({ mode: 'ran', dep: 'ran' });

    await chmod(path.join(made.dir, 'tool.sh'), 0o644);
    await chmod(path.join(made.dir, 'gen.sh'), 0o644);
    const dropped = await run(made);
    expect(dropped.report.run.dirty).toBe(true);
    expect(stageOf(dropped.report, 'mode')).toMatchObject({
      status: 'ran',
      // `then ./tool.sh` is keyed: a file that cannot be executed is no program the shell finds.
      reasons: [
        'gen.sh mode 100755 → 100644',
        'tool.sh mode 100755 → 100644',
        'now starts ./tool.sh (not found on PATH)',
        'no longer starts /bin/sh',
      ],
    });
    expect(stageOf(dropped.report, 'dep')).toMatchObject({
      status: 'ran',
      reasons: ['gen.sh changed', 'now starts ./gen.sh (not found on PATH)', 'no longer starts /bin/sh'],
    });
    expect(await readFile(path.join(made.dir, 'mode.txt'), 'utf8')).toBe('tool.sh is not executable\n');
    await expectSameAsUncached(made, dropped, ['mode.txt', 'gen.txt']);

    await chmod(path.join(made.dir, 'tool.sh'), 0o755);
    await chmod(path.join(made.dir, 'gen.sh'), 0o755);
    const restored = await run(made);
    expect(restored.report.run.dirty).toBe(false);
    expect(restored.report.run.codeDigest).toBe(first.report.run.codeDigest);
    for (const stage of restored.report.stages) expect(stage.cachedFrom).toBe(first.report.run.id);
    await expectSameAsUncached(made, restored, ['mode.txt', 'gen.txt']);
  });
});

describe('submodules', () => {
  test('an uncommitted edit or an untracked file inside a submodule re-runs and makes the run dirty', async () => {
    const lib = await makeRepo({ files: { 'lib.txt': 'v1\n' } });
    cleanups.push(lib.cleanup);
    const made = await project({
      '.gitignore': 'out.txt\n',
      'fluksio.yml': `version: 1
stages:
  use:
    cmd: cat vendor/*.txt > out.txt
    outs: [out.txt]
`,
    });
    await made.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', lib.dir, 'vendor');
    await made.commitAll('vendor the library');
    const first = await run(made);
    expect(first.report.run.dirty).toBe(false);

    await writeFile(path.join(made.dir, 'vendor/lib.txt'), 'v2\n');
    expect(await made.git('status', '--porcelain')).toBe(' M vendor\n');
    const edited = await run(made);
    expect(edited.report.run.dirty).toBe(true);
    expect(stageOf(edited.report, 'use')).toMatchObject({ status: 'ran', reasons: ['vendor changed'] });
    await expectSameAsUncached(made, edited, ['out.txt']);

    await writeFile(path.join(made.dir, 'vendor/lib.txt'), 'v1\n');
    await writeFile(path.join(made.dir, 'vendor/extra.txt'), 'extra\n');
    const untracked = await run(made);
    expect(untracked.report.run.dirty).toBe(true);
    expect(stageOf(untracked.report, 'use')).toMatchObject({ status: 'ran', reasons: ['vendor changed'] });
    await expectSameAsUncached(made, untracked, ['out.txt']);

    await rm(path.join(made.dir, 'vendor/extra.txt'));
    const clean = await run(made);
    expect(clean.report.run.dirty).toBe(false);
    expect(stageOf(clean.report, 'use')).toMatchObject({ status: 'cached', cachedFrom: first.report.run.id });
    await expectSameAsUncached(made, clean, ['out.txt']);
  });

  test("a sweep member's scratch copy holds the submodule as the work tree has it, so what it stores is what a run here makes", async () => {
    const lib = await makeRepo({ files: { 'lib.txt': 'v1\n' } });
    cleanups.push(lib.cleanup);
    const made = await project({
      '.gitignore': 'out.txt\n',
      'fluksio.yml': `version: 1
params:
  seed: { type: int, default: 1 }
stages:
  use:
    cmd: 'echo "seed \${seed}: $(ls vendor)" > out.txt'
    params: [seed]
    outs: [out.txt]
`,
    });
    await made.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', lib.dir, 'vendor');
    await made.commitAll('vendor the library');
    // Every member but the last runs in a scratch copy: seed=1 there, seed=2 here.
    const sweep = await runCli(['run', 'seed=1,2', '-j', '2'], { cwd: made.dir });
    expect(sweep.code, sweep.stderr).toBe(0);
    const here = await run(made, ['seed=1']);
    expect(stageOf(here.report, 'use').status).toBe('cached');
    expect(await readFile(path.join(made.dir, 'out.txt'), 'utf8')).toBe('seed 1: lib.txt\n');
    await expectSameAsUncached(made, here, ['out.txt'], ['seed=1']);

    // An untracked file in the submodule is in the copy too, and keyed there as here.
    await writeFile(path.join(made.dir, 'vendor/extra.txt'), 'extra\n');
    const dirty = await runCli(['run', 'seed=3,4', '-j', '2'], { cwd: made.dir });
    expect(dirty.code, dirty.stderr).toBe(0);
    const dirtyHere = await run(made, ['seed=3']);
    expect(stageOf(dirtyHere.report, 'use').status).toBe('cached');
    await expectSameAsUncached(made, dirtyHere, ['out.txt'], ['seed=3']);
  });
});

describe('empty directories', () => {
  const files = {
    '.gitignore': 'listing.txt\nbuild/\ntree.txt\n',
    'inputs/a.txt': 'a\n',
    'fluksio.yml': `version: 1
params:
  suffix: { type: string, default: a }
stages:
  list:
    cmd: find inputs | sort > listing.txt
    deps: [inputs]
    outs: [listing.txt]
    code: false
  build:
    cmd: mkdir -p build/logs build/cache/tmp && echo built > build/hello.txt
    outs: [build]
    code: false
  tree:
    cmd: find build | sort > tree.txt && echo \${suffix} >> tree.txt
    deps: [build]
    params: [suffix]
    outs: [tree.txt]
    code: false
`,
  };

  test('an empty directory added to a directory dep re-runs its stage', async () => {
    const made = await project(files);
    await run(made);
    await mkdir(path.join(made.dir, 'inputs/empty'));
    const again = await run(made);
    expect(stageOf(again.report, 'list')).toMatchObject({ status: 'ran', reasons: ['inputs changed'] });
    expect(await readFile(path.join(made.dir, 'listing.txt'), 'utf8')).toContain('inputs/empty\n');
    await expectSameAsUncached(made, again, ['listing.txt']);
  });

  test('a restored directory out keeps its empty directories for the stage downstream', async () => {
    const made = await project(files);
    await run(made);
    await rm(path.join(made.dir, 'build'), { recursive: true });
    await rm(path.join(made.dir, 'tree.txt'));
    const again = await run(made, ['suffix=b']);
    expect(statuses(again.report)).toEqual({ list: 'cached', build: 'cached', tree: 'ran' });
    expect(await readFile(path.join(made.dir, 'tree.txt'), 'utf8')).toBe(
      'build\nbuild/cache\nbuild/cache/tmp\nbuild/hello.txt\nbuild/logs\nb\n',
    );
    await expectSameAsUncached(made, again, ['build', 'tree.txt'], ['suffix=b']);
  });
});

describe("git's blind spots", () => {
  const files = {
    '.gitignore': 'out.txt\n',
    'settings.txt': 'lr=1\n',
    'fluksio.yml': `version: 1
stages:
  show:
    cmd: cat settings.txt > out.txt
    outs: [out.txt]
`,
  };

  test('an edit hidden from git by core.trustctime=false and a restored mtime still re-runs', async () => {
    const made = await project(files);
    await made.git('config', 'core.trustctime', 'false');
    const settings = path.join(made.dir, 'settings.txt');
    const first = await run(made);
    // Once the file is older than the racy window, a run records it in the stat cache.
    await waitUntilSettled(settings);
    const warm = await run(made);
    expect(stageOf(warm.report, 'show').status).toBe('cached');
    expect(await readFile(path.join(made.dir, '.fluksio/code-stat-cache'), 'utf8')).toContain(
      '\0settings.txt\0',
    );

    // git's index, written after the file settled, vouches for it; then a same-size edit
    // with its timestamps put back (to the nanosecond) leaves only the ctime changed.
    await made.git('update-index', '--refresh');
    const reference = path.join(made.dir, '.git', 'settings-times');
    await exec('touch', ['-r', settings, reference]);
    await writeFile(settings, 'lr=2\n');
    await exec('touch', ['-r', reference, settings]);
    expect(await made.git('status', '--porcelain')).toBe('');
    const edited = await run(made);
    expect(edited.report.run.dirty).toBe(true);
    expect(edited.report.run.codeDigest).not.toBe(first.report.run.codeDigest);
    expect(stageOf(edited.report, 'show')).toMatchObject({
      status: 'ran',
      reasons: ['settings.txt changed'],
    });
    expect(await readFile(path.join(made.dir, 'out.txt'), 'utf8')).toBe('lr=2\n');
    await expectSameAsUncached(made, edited, ['out.txt']);
  });

  test('a lossy clean filter does not hide an edit from the key', async () => {
    const made = await project({ ...files, '.gitattributes': 'settings.txt filter=redact\n' });
    await made.git('config', 'filter.redact.clean', 'sed s/lr=.*/lr=REDACTED/');
    await made.commitAll('redact settings');
    await run(made);
    await writeFile(path.join(made.dir, 'settings.txt'), 'lr=7\n');
    const edited = await run(made);
    expect(stageOf(edited.report, 'show')).toMatchObject({
      status: 'ran',
      reasons: ['settings.txt changed'],
    });
    expect(await readFile(path.join(made.dir, 'out.txt'), 'utf8')).toBe('lr=7\n');
    await expectSameAsUncached(made, edited, ['out.txt']);
  });

  test('an edit a lossy clean filter hides from git makes the run dirty', async () => {
    const made = await project({ ...files, '.gitattributes': 'settings.txt filter=redact\n' });
    await made.git('config', 'filter.redact.clean', 'sed s/lr=.*/lr=REDACTED/');
    await made.git('add', '--renormalize', 'settings.txt');
    await made.commitAll('redact settings');
    // The bytes a checkout of the commit writes: the run reads what the commit holds.
    const settings = path.join(made.dir, 'settings.txt');
    await rm(settings);
    await made.git('checkout', '--', 'settings.txt');
    expect(await readFile(settings, 'utf8')).toBe('lr=REDACTED\n');
    const clean = await run(made);
    expect(clean.report.run.dirty).toBe(false);

    // Same size, so git hashes it again (through the filter) rather than calling it modified.
    await writeFile(settings, 'lr=77777777\n');
    expect(await made.git('status', '--porcelain')).toBe('');
    const edited = await run(made);
    expect(edited.report.run.dirty).toBe(true);
    expect(stageOf(edited.report, 'show')).toMatchObject({
      status: 'ran',
      reasons: ['settings.txt changed'],
    });
    await expectSameAsUncached(made, edited, ['out.txt']);
  });

  test('with autocrlf, committing an edit changes no byte a stage reads, so nothing re-runs', async () => {
    const made = await project(files);
    await made.git('config', 'core.autocrlf', 'true');
    await rm(path.join(made.dir, 'settings.txt'));
    await made.git('checkout', '--', 'settings.txt');
    expect(await readFile(path.join(made.dir, 'settings.txt'), 'utf8')).toBe('lr=1\r\n');
    const first = await run(made);
    expect(first.report.run.dirty).toBe(false);

    await writeFile(path.join(made.dir, 'settings.txt'), 'lr=2\r\n');
    const edited = await run(made);
    expect(edited.report.run.dirty).toBe(true);
    expect(stageOf(edited.report, 'show')).toMatchObject({
      status: 'ran',
      reasons: ['settings.txt changed'],
    });

    await made.commitAll('lr=2');
    const committed = await run(made);
    expect(committed.report.run.dirty).toBe(false);
    expect(committed.report.run.codeDigest).toBe(edited.report.run.codeDigest);
    expect(stageOf(committed.report, 'show')).toMatchObject({
      status: 'cached',
      cachedFrom: edited.report.run.id,
    });
    await expectSameAsUncached(made, committed, ['out.txt']);
  });
});

describe('file names git holds as bytes', () => {
  test('a code file whose name is not UTF-8 is refused, named as git shows it, rather than left out of the key', async () => {
    // Before, the name decoded to "conf\uFFFD.txt", no such file was found, and the file
    // was silently left out of every code digest: editing it restored the stale out.
    const made = await project({
      '.gitignore': 'out.txt\n',
      'fluksio.yml': `version: 1
stages:
  show:
    cmd: cat conf* > out.txt
    outs: [out.txt]
`,
    });
    const latin1Name = Buffer.concat([
      Buffer.from(`${made.dir}/conf`),
      Buffer.from([0xff]),
      Buffer.from('.txt'),
    ]);
    await writeFile(latin1Name, 'one\n');
    await made.commitAll('a file named in Latin-1');

    const refused = await runCli(['run'], { cwd: made.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('Code file "conf\\377.txt" is named in bytes that are not UTF-8');
    expect(refused.stderr).toContain('git mv');
    expect(await lstat(path.join(made.dir, 'out.txt')).catch(() => null)).toBeNull();

    // The fix the sentence gives: a UTF-8 name, which the key then covers.
    await rename(latin1Name, path.join(made.dir, 'conf.txt'));
    await made.commitAll('rename the file');
    const renamed = await run(made);
    expect(stageOf(renamed.report, 'show').status).toBe('ran');
    await made.write('conf.txt', 'two\n');
    const edited = await run(made);
    expect(stageOf(edited.report, 'show')).toMatchObject({ status: 'ran', reasons: ['conf.txt changed'] });
    expect(await readFile(path.join(made.dir, 'out.txt'), 'utf8')).toBe('two\n');
  });
});

describe('symlinks', () => {
  const pipeline = `version: 1
stages:
  show:
    cmd: cat helper.py > out.txt
    outs: [out.txt]
`;

  test('a code symlink leading outside the repository is refused like such a dep, naming link, target and fix', async () => {
    const outside = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-outside-')));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await writeFile(path.join(outside, 'helper.py'), 'X = 1\n');
    const made = await project({ '.gitignore': 'out.txt\n', 'fluksio.yml': pipeline });
    await symlink(path.join(outside, 'helper.py'), path.join(made.dir, 'helper.py'));
    await made.commitAll('link a helper from elsewhere');

    const refused = await runCli(['run'], { cwd: made.dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `Code file "helper.py" is a symlink that points outside the workspace (${outside}/helper.py)`,
    );
    expect(refused.stderr).toContain('Copy the target into the repository');
    expect(await lstat(path.join(made.dir, 'out.txt')).catch(() => null)).toBeNull();

    await made.write(
      'fluksio.yml',
      pipeline.replace('outs: [out.txt]', 'deps: [helper.py]\n    outs: [out.txt]\n    code: false'),
    );
    const asDep = await runCli(['run'], { cwd: made.dir });
    expect(asDep.code).toBe(2);
    expect(asDep.stderr).toContain('"helper.py" is a symlink that points outside the workspace');
  });

  test('a code symlink inside the repository re-runs when its target is edited', async () => {
    const made = await project({
      '.gitignore': 'out.txt\n',
      'fluksio.yml': pipeline,
      'lib/helper.py': 'X = 1\n',
    });
    await symlink('lib/helper.py', path.join(made.dir, 'helper.py'));
    await made.commitAll('link the helper');
    await run(made);
    await made.write('lib/helper.py', 'X = 2\n');
    const edited = await run(made);
    expect(stageOf(edited.report, 'show')).toMatchObject({
      status: 'ran',
      reasons: ['lib/helper.py changed'],
    });
    await expectSameAsUncached(made, edited, ['out.txt']);
  });
});
