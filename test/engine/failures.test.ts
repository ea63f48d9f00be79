import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { makeMlProject } from '../helpers/ml-project.js';
import { runCli, runJson, stageOf, statuses } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const SECRET = 'hunter2-s3cr3t-value';

describe('a stage that raises in Python', () => {
  test('fails the run with the exception, its frames, and annotations on the right lines', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: python3 src/train.py
    deps: [src/train.py]
    outs: [model.txt]
`,
        'src/train.py': `import sys
sys.path.insert(0, "src")
from model import fit

print("::warning file=src/train.py,line=4::learning rate is tiny")
fit([1, 2, 3])
`,
        'src/model.py': `def fit(rows):
    total = sum(rows)
    return total / (len(rows) - 3)
`,
      },
    });
    const plain = await runCli(['run'], { cwd: repo.dir });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain('ZeroDivisionError: division by zero');
    expect(plain.stdout).toMatch(/File ".*src\/model\.py", line 3, in fit/);
    expect(plain.stdout).toMatch(
      /Stage train failed: exited with code 1: ZeroDivisionError: division by zero/,
    );

    const { code, report } = await runJson([], { cwd: repo.dir });
    expect(code).toBe(1);
    expect(report.run.status).toBe('failed');
    expect(stageOf(report, 'train')).toMatchObject({ status: 'failed', cacheKey: expect.any(String) });
    expect(report.annotations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'src/model.py',
          line: 3,
          level: 'error',
          message: 'ZeroDivisionError: division by zero',
        }),
        expect.objectContaining({
          path: 'src/train.py',
          line: 4,
          level: 'warning',
          message: 'learning rate is tiny',
        }),
      ]),
    );
  });

  test('a misspelt or missing program says which one the shell could not find', async () => {
    repo = await makeRepo({
      files: { 'fluksio.yml': 'version: 1\nstages:\n  a:\n    cmd: pyhton3 train.py --lr 0.1\n' },
    });
    const ran = await runJson([], { cwd: repo.dir });
    expect(ran.code).toBe(1);
    expect(stageOf(ran.report, 'a').error).toBe(
      'exited with code 127: the shell found no command "pyhton3" (misspelt, or not installed on the PATH fluksio ran it with)',
    );
  });

  test('a failed stage is never cached and its dependents are skipped', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  a:
    cmd: sh -c 'echo boom >&2; exit 3'
    outs: [a.txt]
  b:
    cmd: cat a.txt > b.txt
    deps: [a.txt]
    outs: [b.txt]
  c:
    cmd: echo independent > c.txt
    outs: [c.txt]
`,
      },
    });
    const first = await runJson(['--jobs', '2'], { cwd: repo.dir });
    expect(first.code).toBe(1);
    expect(statuses(first.report)).toEqual({ a: 'failed', b: 'skipped', c: 'ran' });
    expect(stageOf(first.report, 'a').error).toBe('exited with code 3');
    expect(stageOf(first.report, 'b').error).toBe('upstream stage a failed');
    const second = await runJson([], { cwd: repo.dir });
    expect(statuses(second.report)).toEqual({ a: 'failed', b: 'skipped', c: 'cached' });
  });
});

describe('outs', () => {
  test('a stage that exits 0 without writing its out fails and caches nothing', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  lazy:
    cmd: echo "forgot to write it"
    outs: [result.txt]
`,
      },
    });
    const first = await runJson([], { cwd: repo.dir });
    expect(first.code).toBe(1);
    expect(stageOf(first.report, 'lazy')).toMatchObject({
      status: 'failed',
      error: 'exited 0 but did not write its out "result.txt"',
    });
    const second = await runJson([], { cwd: repo.dir });
    expect(stageOf(second.report, 'lazy').status).toBe('failed');
  });

  test('outs are removed before a stage runs', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
params:
  n: { type: int, default: 1 }
stages:
  append:
    cmd: echo \${n} >> out.txt
    params: [n]
    outs: [out.txt]
`,
      },
    });
    await runJson([], { cwd: repo.dir });
    await runJson(['n=2'], { cwd: repo.dir });
    expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('2\n');
  });

  test('a corrupted blob is a miss that re-runs the stage and repairs the entry, never a wrong restore', async () => {
    repo = await makeMlProject();
    const env = { DEVICE: 'cpu' };
    const first = await runJson([], { cwd: repo.dir, env });
    const model = await readFile(join(repo.dir, 'model.txt'), 'utf8');
    const modelDigest = await blobPathOf(repo.dir, model);
    await writeFile(modelDigest, 'lr=999 loss=0\n');

    const second = await runJson([], { cwd: repo.dir, env });
    expect(second.code).toBe(0);
    expect(stageOf(second.report, 'train')).toMatchObject({
      status: 'ran',
      reasons: [
        expect.stringMatching(
          /^cached outputs of run \w+ could not be restored \(blob sha256:\w+ was corrupt\)$/,
        ),
      ],
    });
    expect(stageOf(second.report, 'prepare').status).toBe('cached');
    expect(await readFile(join(repo.dir, 'model.txt'), 'utf8')).toBe(model);

    const third = await runJson([], { cwd: repo.dir, env });
    expect(statuses(third.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    expect(stageOf(third.report, 'train').cachedFrom).toBe(second.report.run.id);
    expect(stageOf(third.report, 'prepare').cachedFrom).toBe(first.report.run.id);
    expect(await readFile(join(repo.dir, 'model.txt'), 'utf8')).toBe(model);
  });
});

/** The blob file holding these bytes in a project's store. */
async function blobPathOf(dir: string, content: string): Promise<string> {
  const { createHash } = await import('node:crypto');
  const hex = createHash('sha256').update(content).digest('hex');
  const path = join(dir, '.fluksio', 'blobs', 'sha256', hex.slice(0, 2), hex);
  expect((await readdir(join(dir, '.fluksio', 'blobs', 'sha256', hex.slice(0, 2)))).includes(hex)).toBe(true);
  return path;
}

describe('masking', () => {
  test('a masked value never appears in any stored or printed log, even split across writes', async () => {
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
stages:
  leak:
    cmd: python3 leak.py
    outs: [done.txt]
`,
        'leak.py': `import sys, time
secret = "${SECRET}"
print(f"::add-mask::{secret}", flush=True)
print("token is " + secret, flush=True)
sys.stdout.write("split " + secret[:7]); sys.stdout.flush(); time.sleep(0.2)
sys.stdout.write(secret[7:] + " done\\n"); sys.stdout.flush()
sys.stderr.write("err " + secret + "\\n")
open("done.txt", "w").write("ok")
`,
      },
    });
    const result = await runCli(['run'], { cwd: repo.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('token is ***');
    expect(result.stdout).toContain('split *** done');
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expect(result.stdout).not.toContain(SECRET.slice(0, 7) + '\n');

    const runs = JSON.parse((await runCli(['runs', '--json'], { cwd: repo.dir })).stdout) as { id: string }[];
    const log = await runCli(['show', runs[0]?.id ?? '', '--log', 'leak'], { cwd: repo.dir });
    expect(log.stdout).toContain('split *** done');
    expect(log.stdout).toContain('err ***');
    expect(log.stdout).not.toContain(SECRET);
    const show = await runCli(['show', runs[0]?.id ?? '', '--json'], { cwd: repo.dir });
    expect(show.stdout).not.toContain(SECRET);
    const blobs = await grepStore(join(repo.dir, '.fluksio'), SECRET);
    expect(blobs).toEqual([]);
  });
});

/** Files under a directory whose bytes contain a string. */
async function grepStore(dir: string, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(needle)) hits.push(path);
  }
  return hits;
}
