import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { runStageProcess } from '../../runner/sandbox/stage-process.js';
import { startSlurm } from './slurm-job.js';

// A stage run as a Slurm job writes its output to files on the cluster's shared file
// system, which the runner follows: the stage's log limit bounds those files at the source,
// or a stage printing forever fills the shared file system. Past the limit its ::metric
// lines still arrive, and the end of its output (a traceback) too, as with the plain runner.

let dir: string;
beforeAll(startSlurm, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-cap-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const LIMIT = 16 * 1024;

test('a Slurm stage printing far past its log limit leaves files of about the limit, its metrics and last words forwarded', async () => {
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const lines: string[] = [];
  // 2 MB on each stream, a metric in the middle and at the end, a last line on stderr.
  const cmd = [
    `python3 -c "import sys`,
    `for i in range(20000): print('out', i, 'x' * 90); print('err', i, 'y' * 90, file=sys.stderr)`,
    `print('::metric name=loss::0.5')`,
    `for i in range(20000): print('more', i, 'z' * 90)`,
    `print('::metric name=loss::0.25', flush=True)`,
    `print('Traceback: the last words', file=sys.stderr)"`,
  ].join('\n');
  const result = await runStageProcess({
    cmd,
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 120_000,
    launcher,
    stage: { name: 'chatty', jobKey: 'k1', resources: { cpus: 1 }, logLimit: LIMIT },
    onLine: (stream, line) => lines.push(`${stream}: ${line}`),
  });
  expect(result.exitCode, lines.slice(-20).join('\n')).toBe(0);
  const files = readdirSync(join(dir, 'jobs')).filter((name) => /\.(out|err)$/.test(name));
  expect(files).toHaveLength(2);
  for (const name of files) {
    // The limit, then the end of the output (at most 64 KiB) and the lines saying so.
    expect(statSync(join(dir, 'jobs', name)).size, name).toBeLessThan(LIMIT + 64 * 1024 + 4096);
  }
  expect(lines).toEqual(
    expect.arrayContaining([
      'stdout: out 0 ' + 'x'.repeat(90),
      'stdout: ::metric name=loss::0.5',
      'stdout: ::metric name=loss::0.25',
      'stderr: Traceback: the last words',
    ]),
  );
  expect(lines.join('\n')).toMatch(/log limit/);
}, 180_000);
