import { randomUUID } from 'node:crypto';
import { readdirSync, watch } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, statuses } from '../helpers/run-cli.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/**
 * A directory out of many small files, so that restoring it from the cache takes long
 * enough to be killed in the middle; and a shell stage downstream, keyed on the whole
 * code, which any stray file in the work tree would make miss.
 */
async function shardProject(): Promise<TestRepo> {
  const made = await makeRepo({
    files: {
      '.gitignore': 'shards/\ncount.txt\nmodel.bin\n.notes.*\n',
      'make.py': [
        'import os',
        "os.makedirs('shards', exist_ok=True)",
        'for i in range(800):',
        "    with open(f'shards/s{i}.txt', 'w') as f:",
        "        f.write(f'shard {i}\\n')",
        "open('model.bin', 'w').write('weights\\n')",
        '',
      ].join('\n'),
      'fluksio.yml': `version: 1
stages:
  make:
    cmd: python3 make.py
    deps: [make.py]
    outs: [shards, model.bin]
  count:
    cmd: ls shards | wc -l > count.txt
    deps: [shards]
    outs: [count.txt]
`,
    },
  });
  cleanups.push(made.cleanup);
  return made;
}

async function runClean(made: TestRepo) {
  const result = await runJson([], { cwd: made.dir });
  expect(result.code, result.stderr).toBe(0);
  return result;
}

test('a run killed while it restores a directory out leaves nothing that makes the next run dirty', async () => {
  const made = await shardProject();
  expect(statuses((await runClean(made)).report)).toEqual({ make: 'ran', count: 'ran' });
  await rm(path.join(made.dir, 'shards'), { recursive: true });

  const killed = spawnFluksio(['run'], { cwd: made.dir });
  // Killed once the restore's temporary folder holds some of its 800 files.
  const watcher = watch(made.dir, (_event, name) => {
    if (!name?.endsWith('.fluksio-restore')) return;
    const temp = path.join(made.dir, name);
    const killWhenFilled = () => {
      const filled = (() => {
        try {
          return readdirSync(temp).length >= 10;
        } catch {
          return true;
        }
      })();
      if (filled) killed.child.kill('SIGKILL');
      else if (killed.child.exitCode === null) setImmediate(killWhenFilled);
    };
    killWhenFilled();
  });
  try {
    expect(await killed.exited).toBe('SIGKILL');
  } finally {
    watcher.close();
  }
  expect((await readdir(made.dir)).filter((name) => name.includes('.fluksio-'))).not.toEqual([]);

  const next = await runClean(made);
  expect(next.report.run.dirty).toBe(false);
  expect(statuses(next.report)).toEqual({ make: 'cached', count: 'cached' });
  expect((await readdir(made.dir)).filter((name) => name.includes('.fluksio-'))).toEqual([]);
  expect(await made.git('status', '--porcelain')).toBe('');
});

test('what a killed restore leaves beside a file out or a directory out swapped aside is removed, and nothing else', async () => {
  const made = await shardProject();
  await runClean(made);
  // The names restoreOut gives its temporary copies, the blob store's copy into one, and
  // the old directory it moves aside, as a kill at each step leaves them.
  const leftovers = [
    `.model.bin.${randomUUID()}.fluksio-restore`,
    `..model.bin.${randomUUID()}.fluksio-restore.${randomUUID()}.fluksio-tmp`,
    `.shards.${randomUUID()}.fluksio-old`,
  ];
  for (const name of leftovers.slice(0, 2)) await writeFile(path.join(made.dir, name), 'partial');
  await mkdir(path.join(made.dir, leftovers[2] as string, 'nested'), { recursive: true });
  await writeFile(path.join(made.dir, leftovers[2] as string, 'nested', 's0.txt'), 'shard 0\n');
  // A user's (ignored) file that only looks alike stays: it names no out of the pipeline.
  await writeFile(path.join(made.dir, `.notes.${randomUUID()}.fluksio-old`), 'mine');

  const next = await runClean(made);
  expect(next.report.run.dirty).toBe(false);
  expect(statuses(next.report)).toEqual({ make: 'cached', count: 'cached' });
  const left = (await readdir(made.dir)).filter((name) => name.includes('.fluksio-'));
  expect(left).toEqual([expect.stringMatching(/^\.notes\./)]);
});
