import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { SLURM_JOB_STATE_SCRIPT } from '../../runner/sandbox/slurm-job-state-script.js';
import {
  fakeCalls,
  fakeCommand,
  INVALID_JOB,
  NO_ACCOUNTING,
  UNREACHABLE,
  type FakeReply,
} from './fake-slurm.js';

const run = promisify(execFile);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fluksio-slurm-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `body` after the state functions, with only the stand-ins in `dir` on PATH. */
async function bash(body: string): Promise<string> {
  const { stdout } = await run('/bin/bash', ['-c', `${SLURM_JOB_STATE_SCRIPT}\n${body}`], {
    env: { PATH: dir },
  });
  return stdout;
}

/** What `read_job_state 42` answers, and which sources it asked. */
async function readState(sources: { squeue?: FakeReply; sacct?: FakeReply; scontrol?: FakeReply }) {
  for (const [name, reply] of Object.entries(sources)) await fakeCommand(dir, name, [reply]);
  const out = await bash(
    `read_job_state 42; printf '%s\\n' "$?" "$job_state" "$job_reason" "$job_exit" "$job_nodes" "$job_restarts"`,
  );
  const [code, state, reason, exit, nodes, restarts] = out.split('\n');
  const asked = (await fakeCalls(dir)).map((call) => call.split(' ')[0]);
  return { code: Number(code), state, reason, exit, nodes, restarts, asked };
}

const squeueLine = (line: string): FakeReply => ({ stdout: line });
const scontrolLine = (fields: string): FakeReply => ({
  stdout: `JobId=42 JobName=fluksio-train ${fields} Partition=debug`,
});

describe('read_job_state: squeue, then sacct, then scontrol', () => {
  test.each([
    {
      case: 'squeue knows a pending job: nothing else is asked',
      sources: { squeue: squeueLine('PENDING|Resources||0|') },
      known: { code: 0, state: 'PENDING', reason: 'Resources', exit: '', nodes: '', restarts: '0' },
      asked: ['squeue'],
    },
    {
      case: 'a reason with spaces stays whole',
      sources: { squeue: squeueLine('PENDING|ReqNodeNotAvail, UnavailableNodes:vm||0|') },
      known: { code: 0, state: 'PENDING', reason: 'ReqNodeNotAvail, UnavailableNodes:vm' },
      asked: ['squeue'],
    },
    {
      case: 'squeue knows a running job, its node and its restarts',
      sources: { squeue: squeueLine('RUNNING|None|vm|2|') },
      known: { code: 0, state: 'RUNNING', nodes: 'vm', restarts: '2' },
      asked: ['squeue'],
    },
    {
      case: 'a job squeue says COMPLETED exited 0',
      sources: { squeue: squeueLine('COMPLETED|None|vm|0|') },
      known: { code: 0, state: 'COMPLETED', exit: '0:0' },
      asked: ['squeue'],
    },
    {
      case: 'a job squeue says FAILED takes its exit code from scontrol when there is no accounting',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: NO_ACCOUNTING,
        scontrol: scontrolLine('JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=3:0 NodeList=vm'),
      },
      known: { code: 0, state: 'FAILED', exit: '3:0', nodes: 'vm' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a job squeue says FAILED takes its exit code from sacct when scontrol cannot say',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: { stdout: 'FAILED|None|0:9|vm|2026-12-02T12:00:05' },
      },
      known: { code: 0, state: 'FAILED', exit: '0:9' },
      asked: ['squeue', 'sacct'],
    },
    {
      // Seen on the test cluster (22.05): a job whose command exits 137 is ExitCode=137:0 to
      // scontrol and 9:0 to sacct, which loses a code's bit 7 (200 reads 72, 128 reads 0).
      case: 'a job squeue says FAILED takes scontrol’s exit code over the accounting’s, which drops codes past 127 by 128',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: { stdout: 'FAILED|NonZeroExitCode|9:0|vm|2026-12-02T12:00:05' },
        scontrol: scontrolLine(
          'JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=137:0 NodeList=vm',
        ),
      },
      known: { code: 0, state: 'FAILED', exit: '137:0', nodes: 'vm' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'squeue unreachable: a FAILED record’s exit code is still scontrol’s when slurmctld knows the job',
      sources: {
        squeue: UNREACHABLE,
        sacct: { stdout: 'FAILED|NonZeroExitCode|72:0|vm|2026-12-02T12:00:05' },
        scontrol: scontrolLine(
          'JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=200:0 NodeList=vm',
        ),
      },
      known: { code: 0, state: 'FAILED', exit: '200:0', nodes: 'vm' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a FAILED record of a job slurmctld forgot: the accounting’s exit code, the only one left',
      sources: {
        squeue: INVALID_JOB,
        sacct: { stdout: 'FAILED|NonZeroExitCode|3:0|vm|2026-12-02T12:00:05' },
        scontrol: INVALID_JOB,
      },
      known: { code: 0, state: 'FAILED', exit: '3:0', nodes: 'vm' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'squeue unreachable: sacct knows the job',
      sources: { squeue: UNREACHABLE, sacct: { stdout: 'COMPLETED|None|0:0|vm|2026-12-02T12:00:05' } },
      known: { code: 0, state: 'COMPLETED', exit: '0:0', nodes: 'vm', restarts: '' },
      asked: ['squeue', 'sacct'],
    },
    {
      case: 'squeue unreachable, no accounting: scontrol knows the job',
      sources: {
        squeue: UNREACHABLE,
        sacct: NO_ACCOUNTING,
        scontrol: scontrolLine('JobState=RUNNING Reason=None Restarts=1 ExitCode=0:0 NodeList=vm'),
      },
      known: { code: 0, state: 'RUNNING', nodes: 'vm', restarts: '1' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a job slurmctld forgot is known to the accounting, with its state as sacct words it',
      sources: {
        squeue: INVALID_JOB,
        sacct: { stdout: 'CANCELLED by 0|None|0:15|None assigned|2026-12-02T12:00:05' },
      },
      known: { code: 0, state: 'CANCELLED', exit: '0:15', nodes: '' },
      asked: ['squeue', 'sacct'],
    },
    {
      case: 'unknown to every source that answered: no such job',
      sources: { squeue: INVALID_JOB, sacct: NO_ACCOUNTING, scontrol: INVALID_JOB },
      known: { code: 1, state: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'squeue does not know it and the accounting has no line: no such job, though scontrol failed',
      sources: { squeue: INVALID_JOB, sacct: { stdout: '' }, scontrol: UNREACHABLE },
      known: { code: 1, state: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'no source could answer: a transient failure, never "no such job"',
      sources: { squeue: UNREACHABLE, sacct: NO_ACCOUNTING, scontrol: UNREACHABLE },
      known: { code: 2, state: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'no sacct installed and slurmctld unreachable: a transient failure',
      sources: { squeue: UNREACHABLE, scontrol: UNREACHABLE },
      known: { code: 2, state: '' },
      asked: ['squeue', 'scontrol'],
    },
    {
      case: 'squeue unreachable, the accounting not yet told the job ended: scontrol’s end wins over sacct’s RUNNING',
      sources: {
        squeue: UNREACHABLE,
        sacct: { stdout: 'RUNNING|None|0:0|vm|Unknown' },
        scontrol: scontrolLine('JobState=COMPLETED Reason=None Restarts=0 ExitCode=0:0 NodeList=vm'),
      },
      known: { code: 0, state: 'COMPLETED', exit: '0:0', nodes: 'vm', restarts: '0' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a job squeue says FAILED takes no exit code from a record still RUNNING, but scontrol’s',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: { stdout: 'RUNNING|None|0:0|vm|Unknown' },
        scontrol: scontrolLine('JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=3:0 NodeList=vm'),
      },
      known: { code: 0, state: 'FAILED', exit: '3:0' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a record without its exit code yet is not final either',
      sources: {
        squeue: UNREACHABLE,
        sacct: { stdout: 'FAILED|None||vm|2026-12-02T12:00:05' },
        scontrol: scontrolLine('JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=3:0 NodeList=vm'),
      },
      known: { code: 0, state: 'FAILED', exit: '3:0' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a record in an end state without its End (the job’s end not recorded yet) is not final',
      sources: {
        squeue: UNREACHABLE,
        sacct: { stdout: 'FAILED|None|0:0|vm|Unknown' },
        scontrol: scontrolLine('JobState=FAILED Reason=NonZeroExitCode Restarts=0 ExitCode=2:0 NodeList=vm'),
      },
      known: { code: 0, state: 'FAILED', exit: '2:0' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'FAILED from squeue, the record still RUNNING and scontrol unreachable: asked again',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: { stdout: 'RUNNING|None|0:0|vm|Unknown' },
        scontrol: UNREACHABLE,
      },
      known: { code: 2, state: 'FAILED', exit: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'FAILED from squeue, no record yet and scontrol unreachable: asked again',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: { stdout: '' },
        scontrol: UNREACHABLE,
      },
      known: { code: 2, state: 'FAILED', exit: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'slurmctld unreachable: a RUNNING record is the answer, with no exit code',
      sources: {
        squeue: UNREACHABLE,
        sacct: { stdout: 'RUNNING|None|0:0|vm|Unknown' },
        scontrol: UNREACHABLE,
      },
      known: { code: 0, state: 'RUNNING', exit: '', nodes: 'vm', restarts: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'a job slurmctld forgot whose end the accounting has not recorded: not known, never alive',
      sources: {
        squeue: INVALID_JOB,
        sacct: { stdout: 'RUNNING|None|0:0|vm|Unknown' },
        scontrol: INVALID_JOB,
      },
      known: { code: 1, state: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
    {
      case: 'FAILED from squeue while the others fail: asked again rather than an exit code guessed',
      sources: {
        squeue: squeueLine('FAILED|NonZeroExitCode|vm|0|'),
        sacct: NO_ACCOUNTING,
        scontrol: UNREACHABLE,
      },
      known: { code: 2, state: 'FAILED', exit: '' },
      asked: ['squeue', 'sacct', 'scontrol'],
    },
  ])('$case', async ({ sources, known, asked }) => {
    const state = await readState(sources);
    expect(state).toMatchObject(known);
    expect(state.asked).toEqual(asked);
  });
});

describe('final_exit_code: the attach process exit code of a job that is over', () => {
  test.each([
    { state: 'COMPLETED', exit: '0:0', cancelled: 0, code: '0' },
    { state: 'COMPLETED', exit: '', cancelled: 0, code: '0' },
    { state: 'FAILED', exit: '3:0', cancelled: 0, code: '3' },
    { state: 'FAILED', exit: '0:9', cancelled: 0, code: '137' },
    { state: 'FAILED', exit: '0:0', cancelled: 0, code: '1' },
    { state: 'CANCELLED', exit: '0:15', cancelled: 2, code: '130' },
    { state: 'CANCELLED', exit: '0:15', cancelled: 0, code: '210' },
    { state: 'TIMEOUT', exit: '0:15', cancelled: 0, code: '211' },
    { state: 'OUT_OF_MEMORY', exit: '0:125', cancelled: 0, code: '212' },
    { state: 'NODE_FAIL', exit: '0:0', cancelled: 0, code: '213' },
    { state: 'PREEMPTED', exit: '0:15', cancelled: 0, code: '214' },
    { state: 'BOOT_FAIL', exit: '0:0', cancelled: 0, code: '215' },
    { state: 'DEADLINE', exit: '0:0', cancelled: 0, code: '216' },
    { state: 'RUNNING', exit: '0:0', cancelled: 0, code: '' },
    { state: 'COMPLETING', exit: '0:0', cancelled: 0, code: '' },
    { state: 'PENDING', exit: '0:0', cancelled: 0, code: '' },
  ])(
    '$state with exit $exit (cancelled by fluksio: $cancelled) → "$code"',
    async ({ state, exit, cancelled, code }) => {
      expect(await bash(`final_exit_code ${state} '${exit}' ${cancelled}`)).toBe(
        code === '' ? '' : `${code}\n`,
      );
    },
  );
});
