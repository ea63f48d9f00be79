import { chmod, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import which from 'which';
import { makeLauncherProbe } from '../../runner/keys/launched-python.js';

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-probe-')));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

test('a launcher is asked in the folder it is started in, once per folder; a missing folder in the nearest one above it', async () => {
  const shim = join(dir, 'python3');
  const log = join(dir, 'asked.log');
  // Answers as the probe's Python would, naming an interpreter after the folder it was started in.
  await writeFile(
    shim,
    `#!/bin/sh\necho "$PWD" >> "${log}"\nprintf 'fluksio-launched-python\\t%s\\n' "$PWD/python-here"\n`,
  );
  await chmod(shim, 0o755);
  for (const folder of ['a', 'b', '.']) {
    await mkdir(join(dir, folder), { recursive: true });
    await symlink('/bin/sh', join(dir, folder, 'python-here'));
  }
  const sh = await realpath('/bin/sh');
  const probe = makeLauncherProbe({ environment: () => Promise.resolve({ PATH: '/usr/bin:/bin' }) });

  expect(await probe(shim, join(dir, 'a'))).toEqual({ executable: join(dir, 'a/python-here'), realPath: sh });
  expect(await probe(shim, join(dir, 'b'))).toEqual({ executable: join(dir, 'b/python-here'), realPath: sh });
  expect(await probe(shim, join(dir, 'a'))).toEqual({ executable: join(dir, 'a/python-here'), realPath: sh });
  // `mkdir -p build/out && cd build/out && python3 …`: made empty, it reads what its parent reads.
  expect(await probe(shim, join(dir, 'build/out'))).toEqual({
    executable: join(dir, 'python-here'),
    realPath: sh,
  });
  expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toEqual([
    join(dir, 'a'),
    join(dir, 'b'),
    dir,
  ]);
});

test("the probe runs none of the folder's code, even where Python would import os from there", async () => {
  const python = which.sync('python3');
  const shim = join(dir, 'python3');
  // A launcher starting Python without its frozen modules: `-c` puts the folder first on the
  // import path, and with `-S` nothing has imported `os` yet.
  await writeFile(shim, `#!/bin/sh\nexec "${python}" -X frozen_modules=off "$@"\n`);
  await chmod(shim, 0o755);
  const repo = join(dir, 'repo');
  await mkdir(repo);
  await writeFile(
    join(repo, 'os.py'),
    `open(${JSON.stringify(join(dir, 'ran'))}, "w").write("ran")\nprint("fluksio-launched-python\\t/forged/python")\nraise SystemExit(0)\n`,
  );
  const probe = makeLauncherProbe({ environment: () => Promise.resolve({ PATH: '/usr/bin:/bin' }) });

  const answer = await probe(shim, repo);
  expect(await readFile(join(dir, 'ran'), 'utf8').catch(() => 'not run')).toBe('not run');
  expect(answer?.executable).not.toBe('/forged/python');
  expect(answer?.realPath).toBe(await realpath(answer?.executable ?? '/'));
});
