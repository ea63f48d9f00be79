import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, statuses } from '../helpers/run-cli.js';
import { jobFields, startSlurm } from './slurm-job.js';

let repo: TestRepo;
beforeAll(startSlurm, 120_000);
afterEach(async () => {
  await repo?.cleanup();
});

describe('fluksio run --backend slurm', () => {
  /**
   * Records its Slurm job id and when it started and ended; in between it marks itself
   * started in `meeting` and waits (up to 2 minutes) for `other` to have started too, so the
   * stage succeeds only if both jobs were running at once: no guessed sleep.
   */
  const timed = (name: string, other: string, meeting: string, resources: string) => `  ${name}:
    cmd: >-
      echo $SLURM_JOB_ID > ${name}.txt && date +%s%N >> ${name}.txt && touch ${meeting}/${name} &&
      for i in $(seq 1200); do [ -e ${meeting}/${other} ] && break; sleep 0.1; done &&
      [ -e ${meeting}/${other} ] && date +%s%N >> ${name}.txt
    outs: [${name}.txt]
    resources: ${resources}
`;
  const lines = async (name: string) =>
    (await readFile(join(repo.dir, `${name}.txt`), 'utf8')).trim().split('\n');

  test('stages run as Slurm jobs with their resources, independent ones at once; a re-run submits nothing', async () => {
    const meeting = await mkdtemp(join(tmpdir(), 'fluksio-slurm-meeting-'));
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
resources: {cpus: 1, memory: 100MiB, time: 10m}
stages:
${timed('left', 'right', meeting, '{gpus: 1, partition: gpu}')}${timed('right', 'left', meeting, '{memory: 200MiB, time: 90s}')}  join:
    cmd: echo $SLURM_JOB_ID > join.txt && date +%s%N >> join.txt && cat left.txt right.txt >> join.txt
    deps: [left.txt, right.txt]
    outs: [join.txt]
`,
      },
    });
    const first = await runJson(['--backend', 'slurm', '--jobs', '2'], { cwd: repo.dir });
    expect(first.report.run.status, first.stderr).toBe('succeeded');
    const [leftJob = '', leftStart = '', leftEnd = ''] = await lines('left');
    const [rightJob = '', rightStart = '', rightEnd = ''] = await lines('right');
    const [joinJob = '', joinStart = ''] = await lines('join');
    expect(new Set([leftJob, rightJob, joinJob]).size).toBe(3);
    // The two independent stages' jobs ran at the same time (each waited for the other to
    // start); the third after both.
    expect(BigInt(leftStart) < BigInt(rightEnd) && BigInt(rightStart) < BigInt(leftEnd)).toBe(true);
    const [left, right, join_] = await Promise.all([leftJob, rightJob, joinJob].map(jobFields));
    expect(left).toMatchObject({
      JobState: 'COMPLETED',
      JobName: 'fluksio-left',
      Partition: 'gpu',
      TimeLimit: '00:10:00',
      MinMemoryNode: '100M',
      NumCPUs: '1',
      WorkDir: repo.dir,
    });
    expect(left?.TresPerJob).toMatch(/gpu:1$/);
    expect(right).toMatchObject({ Partition: 'debug', TimeLimit: '00:02:00', MinMemoryNode: '200M' });
    expect(right?.TresPerJob ?? '').not.toMatch(/gpu/);
    expect(join_).toMatchObject({ JobState: 'COMPLETED', Partition: 'debug', MinMemoryNode: '100M' });
    expect(BigInt(joinStart)).toBeGreaterThanOrEqual(BigInt(leftEnd));
    expect(BigInt(joinStart)).toBeGreaterThanOrEqual(BigInt(rightEnd));

    const again = await runJson(['--backend', 'slurm', '--jobs', '2'], { cwd: repo.dir });
    expect(statuses(again.report)).toEqual({ left: 'cached', right: 'cached', join: 'cached' });
    expect(again.stderr + again.stdout).not.toMatch(/submitted Slurm job/);
    expect(stageOf(again.report, 'join').cachedFrom).toBe(first.report.run.id);
    await rm(meeting, { recursive: true, force: true });
  }, 300_000);
});
