import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { makeLauncherProbe } from '../../runner/keys/launched-python.js';

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-probe-')));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

test('a launcher is asked in the folder it is started in, once per folder; in a missing folder it cannot say', async () => {
  const shim = join(dir, 'python3');
  const log = join(dir, 'asked.log');
  // Answers as the probe's Python would, naming an interpreter after the folder it was started in.
  await writeFile(
    shim,
    `#!/bin/sh\necho "$PWD" >> "${log}"\nprintf 'fluksio-launched-python\\t%s\\t%s\\n' "$PWD/bin/python3" /bin/sh\n`,
  );
  await chmod(shim, 0o755);
  await mkdir(join(dir, 'a'));
  await mkdir(join(dir, 'b'));
  const probe = makeLauncherProbe({ environment: () => Promise.resolve({ PATH: '/usr/bin:/bin' }) });

  expect(await probe(shim, join(dir, 'a'))).toEqual({
    executable: join(dir, 'a/bin/python3'),
    realPath: '/bin/sh',
  });
  expect(await probe(shim, join(dir, 'b'))).toEqual({
    executable: join(dir, 'b/bin/python3'),
    realPath: '/bin/sh',
  });
  expect(await probe(shim, join(dir, 'a'))).toEqual({
    executable: join(dir, 'a/bin/python3'),
    realPath: '/bin/sh',
  });
  expect(await probe(shim, join(dir, 'missing'))).toBeNull();
  expect((await readFile(log, 'utf8')).split('\n').filter(Boolean)).toEqual([join(dir, 'a'), join(dir, 'b')]);
});
