import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { RemoteEventSink } from '../../runner/daemon/remote-event-sink.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { makeClaim } from './helpers/make-claim.js';

let disk: string;

beforeAll(async () => {
  // No test here runs only as root and skips otherwise: a disk that fills up is what this
  // one is about, and a tmpfs is the one that can be made full and freed on demand.
  if (process.getuid?.() !== 0) {
    throw new Error(
      `This test mounts a 64 KiB tmpfs to fill it, which needs root; it runs as uid ${process.getuid?.()}`,
    );
  }
  disk = await mkdtemp(path.join(tmpdir(), 'fluksio-full-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]);
});
afterAll(async () => {
  if (!disk) return;
  // Lazy: a failed run of this test may leave the spool open, which must not keep the mount.
  execFileSync('umount', ['--lazy', disk]);
  await rm(disk, { recursive: true, force: true });
});

/** Writes to `file` until the disk takes no more. */
function fillDisk(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(512, 'x'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

/** The spool's lines, each asserted whole (a JSON event ended by a newline). */
async function spooledStages(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => (JSON.parse(line) as { stage: string }).stage);
}

test('a spool whose disk fills up keeps only whole lines and holds the events it refused: once space returns, each arrives once, in order', async () => {
  const plane = new FakeControlPlane();
  await plane.start();
  try {
    const client = new ControlPlaneClient({
      url: plane.url,
      token: plane.token,
      minRetryDelayMs: 10,
      maxRetryDelayMs: 100,
    });
    const { claim } = plane.enqueue(makeClaim({ repoDir: disk, commit: 'a'.repeat(40) }));
    await client.claim(0, false);
    const run = { runId: claim.run.id, lease: claim.lease };
    const spool = path.join(disk, 'events.jsonl');
    const refusals: unknown[] = [];
    const sink = new RemoteEventSink({
      client,
      run,
      attempt: 1,
      mergeDelayMs: 5,
      spool: { file: spool, maxMemoryBytes: 1024, onSpoolRefused: (error) => refusals.push(error) },
    });
    const stages: string[] = [];
    const emit = (count: number) => {
      for (let index = 0; index < count; index += 1) {
        const stage = `stage-${stages.length}`;
        stages.push(stage);
        sink.emit({ type: 'stage.started', stage, at: new Date().toISOString() });
      }
    };

    await plane.stop();
    // ~100 bytes an event: past the first ten or so, they go to the spool.
    emit(30);
    const flushed = sink.flush();
    expect((await spooledStages(spool)).length).toBeGreaterThan(0);
    // The rest of the disk taken: the spool's lines fill what is left of its last page, and
    // the one that does not fit is refused mid-write.
    const filler = path.join(disk, 'filler');
    fillDisk(filler);
    emit(100);
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ code: 'ENOSPC' });
    // What the spool holds is a run of whole events, in order; those after it wait in memory.
    const whileFull = await spooledStages(spool);
    const first = stages.indexOf(whileFull[0] ?? '');
    expect(first).toBeGreaterThan(0);
    expect(whileFull).toEqual(stages.slice(first, first + whileFull.length));
    expect(first + whileFull.length).toBeLessThan(stages.length);

    // Space again: the events held in memory go to the spool ahead of the new ones.
    await rm(filler);
    emit(10);
    expect(refusals).toHaveLength(1);
    expect(await spooledStages(spool)).toEqual(stages.slice(first));

    await plane.start();
    await flushed;
    await sink.flush();
    const events = plane.eventsOf(run.runId);
    expect(events.map((event) => event.seq)).toEqual(stages.map((_, index) => index));
    expect(events.map((event) => (event.type === 'stage.started' ? event.stage : null))).toEqual(stages);
    expect(existsSync(spool)).toBe(false);
  } finally {
    await plane.stop();
  }
});
