import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, test } from 'vitest';

const CHILD = fileURLToPath(new URL('./store-blob-child.ts', import.meta.url));
const run = promisify(execFile);

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'fluksio-durable-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** One traced call: which (fsync, rename…) and the paths it names (strace -y). */
interface Call {
  name: string;
  line: string;
}

/**
 * A power loss after the control plane answered "stored" must not leave an empty or
 * truncated blob under the digest: the bytes reach the disk (fsync) before the rename puts
 * them under their name, and the rename itself (the directory) reaches it before the answer.
 * Watched from outside, as the kernel sees it: strace on a process storing one blob.
 */
test('a stored blob file is synced before its rename into place, and its directory after', async () => {
  const trace = path.join(root, 'trace');
  const store = path.join(root, 'store');
  const text = 'the bytes of a result';
  const hex = createHash('sha256').update(text).digest('hex');
  await run(
    'strace',
    [
      '-f',
      '-y',
      '-o',
      trace,
      '-e',
      'trace=fsync,fdatasync,rename,renameat,renameat2',
      process.execPath,
      '--import',
      'tsx',
      CHILD,
      store,
      text,
    ],
    { cwd: path.dirname(path.dirname(path.dirname(CHILD))) },
  );
  const calls: Call[] = (await readFile(trace, 'utf8'))
    .split('\n')
    .map((line) => ({ name: /^\d+\s+(\w+)\(/.exec(line)?.[1] ?? '', line }))
    .filter((call) => call.name !== '' && !call.line.includes('= -1'));
  const dest = path.join(store, 'sha256', hex.slice(0, 2), hex);
  const renamed = calls.findIndex(
    (call) => call.name.startsWith('rename') && call.line.includes(`"${dest}"`),
  );
  expect(renamed, 'the blob is renamed into place').toBeGreaterThanOrEqual(0);
  const syncs = (call: Call, target: string): boolean =>
    /^f(data)?sync$/.test(call.name) && call.line.includes(`<${target}`);
  const temp = /"([^"]+)"/.exec(calls[renamed]?.line ?? '')?.[1] ?? '(no temporary file)';
  const fileSynced = calls.slice(0, renamed).some((call) => syncs(call, `${temp}>`));
  expect(fileSynced, 'the temporary file is synced before the rename').toBe(true);
  const dirSynced = calls.slice(renamed + 1).some((call) => syncs(call, `${path.dirname(dest)}>`));
  expect(dirSynced, "the blob's directory is synced after the rename").toBe(true);
});
