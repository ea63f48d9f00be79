import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SlurmLauncher } from '../runner/sandbox/slurm-launcher.js';
import { runStageProcess } from '../runner/sandbox/stage-process.js';
import { median, ms } from './measure.js';

const ROUNDS = 5;

/**
 * Slurm submit → stage start latency (issue 12, acceptance 4): the wall time from the
 * moment a stage is launched through the Slurm backend (its attach process submitting
 * `sbatch --parsable`) until the job's command runs, beside the same for a bare
 * `sbatch --wrap` measured in the same run, alternating. Target: ratio ≤ 1.5×.
 * Needs a running Slurm (scripts/start-slurm.sh).
 */
export async function benchSlurm(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fluksio-bench-slurm-'));
  const launcher = new SlurmLauncher(join(dir, 'jobs'));
  const stamp = (file: string) => `date +%s%N > ${file}`;
  const startedAt = async (file: string) =>
    Number(BigInt((await readFile(file, 'utf8')).trim()) / 1000n) / 1000;
  const fluksio: number[] = [];
  const bare: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      const bareFile = join(dir, `bare-${round}`);
      const before = Date.now();
      const submitted = spawnSync('sbatch', [
        '--parsable',
        '--wait',
        `--chdir=${dir}`,
        '-o',
        '/dev/null',
        `--wrap=${stamp(bareFile)}`,
      ]);
      if (submitted.status !== 0) throw new Error(`sbatch failed: ${submitted.stderr.toString()}`);
      bare.push((await startedAt(bareFile)) - before);

      const stageFile = join(dir, `stage-${round}`);
      const launched = Date.now();
      const result = await runStageProcess({
        cmd: stamp(stageFile),
        cwd: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        timeoutMs: 120_000,
        launcher,
        stage: { name: 'bench', jobKey: `bench-${round}-${launched}`, resources: {} },
        onLine: () => {},
      });
      if (result.exitCode !== 0) throw new Error(`the Slurm stage exited ${result.exitCode}`);
      fluksio.push((await startedAt(stageFile)) - launched);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const ours = median(fluksio);
  const reference = median(bare);
  console.log(
    `slurm: submit → stage start ${ms(ours)} through the Slurm backend vs ${ms(reference)} for a bare sbatch --wrap ` +
      `(median of ${ROUNDS}; ratio ${(ours / reference).toFixed(2)}×, target ≤ 1.5×)`,
  );
}
