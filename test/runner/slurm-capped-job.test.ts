import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { CAPPED_TAIL_BYTES, cappedJobScript } from '../../runner/sandbox/slurm-capped-job.js';

const run = promisify(execFile);

/** What a Slurm job with this body writes to its output file: the body run by a real bash and awk. */
async function jobOutput(cmd: string, limit: number): Promise<string> {
  const { stdout } = await run('/bin/sh', ['-c', cappedJobScript(cmd, limit)], {
    maxBuffer: 64 * 2 ** 20,
  });
  return stdout;
}

test('the last lines follow the count even when the first line past the limit is longer than the tail kept', async () => {
  // A progress bar redrawn with \r and no newline is one long line: then the traceback.
  const long = CAPPED_TAIL_BYTES * 2;
  const output = await jobOutput(
    `head -c ${long} /dev/zero | tr '\\0' x; echo; echo 'Traceback (most recent call last):'; echo 'ValueError: bad'`,
    1024,
  );
  const lines = output.trimEnd().split('\n');
  expect(lines.at(-3)).toBe(
    `fluksio: dropped ${long + 1} bytes (1 lines) past the log limit; the last lines follow`,
  );
  expect(lines.slice(-2)).toEqual(['Traceback (most recent call last):', 'ValueError: bad']);
});
