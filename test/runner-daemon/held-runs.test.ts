import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { HeldRuns } from '../../runner/daemon/held-runs.js';

const LEASE = 'c'.repeat(64);

let workDir: string;
beforeEach(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-held-runs-'));
});
afterEach(async () => {
  await rm(workDir, { recursive: true, force: true });
});

test('a held run is recorded in a file only the runner can read, listed, and gone once forgotten', async () => {
  const held = new HeldRuns(workDir);
  await held.record({ runId: '01JRUNA', attempt: 2, lease: LEASE, epoch: 3, slot: 1 });
  await held.record({ runId: '01JRUNB', attempt: 1, lease: LEASE, slot: 0 });
  const file = path.join(workDir, 'held-runs', '01JRUNA.json');
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
  expect(await held.list()).toEqual({
    held: [
      { runId: '01JRUNA', attempt: 2, lease: LEASE, epoch: 3, slot: 1 },
      // Its epoch left out (as a record written before epochs): the claim's, 0.
      { runId: '01JRUNB', attempt: 1, lease: LEASE, epoch: 0, slot: 0 },
    ],
    unreadable: [],
  });
  await held.forget('01JRUNA');
  expect((await held.list()).held.map((run) => run.runId)).toEqual(['01JRUNB']);
  // Recorded again (a run resumed), the record is replaced whole; no temporary file stays.
  await held.record({ runId: '01JRUNB', attempt: 1, lease: LEASE, slot: 3 });
  expect(await readdir(path.dirname(file))).toEqual(['01JRUNB.json']);
});

test('a file that is not a record is removed, named with what is wrong and never with what it holds', async () => {
  const held = new HeldRuns(workDir);
  await held.record({ runId: '01JRUNA', attempt: 1, lease: LEASE, slot: 0 });
  const dir = path.join(workDir, 'held-runs');
  await writeFile(path.join(dir, '01JCUT.json'), `{"runId":"01JCUT","lease":"${LEASE}`);
  await writeFile(path.join(dir, '01JBAD.json'), JSON.stringify({ runId: '01JBAD', attempt: 0, lease: 'x' }));
  await writeFile(path.join(dir, '01JRUNA.json.1a2b3c4d.tmp'), 'half');
  const { held: found, unreadable } = await held.list();
  expect(found.map((run) => run.runId)).toEqual(['01JRUNA']);
  expect(unreadable).toEqual([
    'held-runs/01JBAD.json: attempt: Too small: expected number to be >0; lease: expected the lease id this run was claimed with; slot: Invalid input: expected number, received undefined',
    'held-runs/01JCUT.json: is not JSON; expected a held-run record',
  ]);
  expect(unreadable.join('\n')).not.toContain(LEASE);
  expect(await readdir(dir)).toEqual(['01JRUNA.json']);
});

test('a record refuses what it could not be read back as', async () => {
  const held = new HeldRuns(workDir);
  await expect(held.record({ runId: '../escape', attempt: 1, lease: LEASE, slot: 0 })).rejects.toThrow(
    /runId/,
  );
});
