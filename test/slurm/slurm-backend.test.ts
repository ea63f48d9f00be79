import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, statuses } from '../helpers/run-cli.js';
import { accountedJob, startSlurm } from './slurm-job.js';

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
  /** A TRES list (`billing=2,cpu=2,gres/gpu=1,mem=150M,node=1`) as a name → amount map. */
  const tres = (list = '') => Object.fromEntries(list.split(',').map((entry) => entry.split('=')));

  test('stages run as Slurm jobs with their resources, as the accounting records them, independent ones at once; a re-run submits nothing', async () => {
    const meeting = await mkdtemp(join(tmpdir(), 'fluksio-slurm-meeting-'));
    repo = await makeRepo({
      files: {
        'fluksio.yml': `version: 1
resources: {cpus: 1, memory: 100MiB, time: 10m}
stages:
${timed('left', 'right', meeting, '{gpus: 1, partition: gpu}')}${timed('right', 'left', meeting, '{memory: 200MiB, time: 90s}')}  join:
    cmd: echo $SLURM_JOB_ID > join.txt && date +%s%N >> join.txt && cat left.txt right.txt >> join.txt && sleep 2
    deps: [left.txt, right.txt]
    outs: [join.txt]
    resources: {cpus: 2, gpus: 1, memory: 150MiB, time: 5m, partition: gpu}
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
    // The flags as the cluster's accounting recorded them: asked (ReqTRES) and held (AllocTRES).
    const [left, right, join_] = await Promise.all(
      [leftJob, rightJob, joinJob].map((id) =>
        accountedJob(id, [
          'JobName',
          'Partition',
          'Timelimit',
          'WorkDir',
          'ReqTRES',
          'AllocTRES',
          'ElapsedRaw',
          'CPUTimeRAW',
        ]),
      ),
    );
    expect(left).toMatchObject({
      State: 'COMPLETED',
      JobName: 'fluksio-left',
      Partition: 'gpu',
      Timelimit: '00:10:00',
      WorkDir: repo.dir,
    });
    expect(tres(left?.ReqTRES)).toMatchObject({ cpu: '1', mem: '100M', 'gres/gpu': '1' });
    expect(tres(left?.AllocTRES)).toMatchObject({ cpu: '1', 'gres/gpu': '1' });
    expect(right).toMatchObject({
      State: 'COMPLETED',
      JobName: 'fluksio-right',
      Partition: 'debug',
      Timelimit: '00:02:00',
    });
    expect(tres(right?.ReqTRES)).toMatchObject({ cpu: '1', mem: '200M' });
    expect(tres(right?.AllocTRES)).not.toHaveProperty('gres/gpu');
    expect(join_).toMatchObject({ State: 'COMPLETED', Partition: 'gpu', Timelimit: '00:05:00' });
    expect(tres(join_?.ReqTRES)).toMatchObject({ cpu: '2', mem: '150M', 'gres/gpu': '1' });
    expect(tres(join_?.AllocTRES)).toMatchObject({ cpu: '2', 'gres/gpu': '1' });
    // What join used, from the same record: its 2 CPUs and 1 GPU for the 2 s it slept, at least.
    expect(stageOf(first.report, 'join').usage).toEqual({
      job: joinJob,
      source: 'sacct',
      cpuSeconds: Number(join_?.CPUTimeRAW),
      gpuSeconds: Number(join_?.ElapsedRaw),
    });
    expect(Number(join_?.CPUTimeRAW)).toBe(2 * Number(join_?.ElapsedRaw));
    expect(Number(join_?.ElapsedRaw)).toBeGreaterThanOrEqual(2);
    expect(BigInt(joinStart)).toBeGreaterThanOrEqual(BigInt(leftEnd));
    expect(BigInt(joinStart)).toBeGreaterThanOrEqual(BigInt(rightEnd));

    const again = await runJson(['--backend', 'slurm', '--jobs', '2'], { cwd: repo.dir });
    expect(statuses(again.report)).toEqual({ left: 'cached', right: 'cached', join: 'cached' });
    expect(again.stderr + again.stdout).not.toMatch(/submitted Slurm job/);
    expect(stageOf(again.report, 'join').cachedFrom).toBe(first.report.run.id);
    await rm(meeting, { recursive: true, force: true });
  }, 300_000);
});
