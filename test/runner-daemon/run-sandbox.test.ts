import { expect, test } from 'vitest';
import { BubblewrapLauncher } from '../../runner/sandbox/bubblewrap-launcher.js';
import { runSandbox, type SandboxPolicy } from '../../runner/daemon/run-sandbox.js';
import { StageUserLauncher } from '../../runner/sandbox/stage-user-launcher.js';

const PATHS = {
  checkout: '/work/checkouts/0/repo',
  borrowedObjects: '/work/mirrors/repo.git/objects',
  slurmJobs: '/work/slurm/run/1',
};
const USER = { name: 'fluksio-stage', uid: 999, gid: 998 };
const BWRAP = { bubblewrap: { path: '/usr/bin/bwrap', version: 'bubblewrap 0.8.0' } } as const;
const NO_BWRAP = { bubblewrap: null, reason: 'bwrap is not on the PATH' } as const;

function policy(overrides: Partial<SandboxPolicy>): SandboxPolicy {
  return {
    detection: NO_BWRAP,
    workDir: '/work',
    always: false,
    hidden: ['/work', '/etc/fluksio/token'],
    hiddenFromForks: ['/root'],
    stageUser: null,
    ...overrides,
  };
}

test('with a stage user, a fork’s run where bubblewrap is missing runs as that user, not refused', () => {
  const sandbox = runSandbox(policy({ stageUser: USER }), true, PATHS);
  expect(sandbox).toMatchObject({
    sandbox: expect.stringMatching(/^stage user fluksio-stage \(uid 999\): /),
  });
  expect('launcher' in sandbox && sandbox.launcher).toBeInstanceOf(StageUserLauncher);
  expect(runSandbox(policy({}), true, PATHS)).toEqual({
    refusal:
      'This runner executes fork pull requests only in a sandbox, and it has none: bwrap is not on the PATH',
  });
});

test('a trusted run runs as the stage user, in bubblewrap too with --sandbox, and directly without either', () => {
  // Only inspected, never launched: launching kills every process of the user.
  const alone = runSandbox(policy({ stageUser: USER }), false, PATHS);
  expect('launcher' in alone && alone.launcher).toBeInstanceOf(StageUserLauncher);
  expect(alone).toMatchObject({ sandbox: expect.stringMatching(/^stage user fluksio-stage \(uid 999\)/) });
  const both = runSandbox(policy({ stageUser: USER, detection: BWRAP, always: true }), false, PATHS);
  expect(both).toMatchObject({
    sandbox: expect.stringMatching(/^bubblewrap 0\.8\.0: .*; as stage user fluksio-stage \(uid 999\)$/),
  });
  expect(runSandbox(policy({}), false, PATHS)).toEqual({ launcher: undefined, sandbox: null });
  const sandboxed = runSandbox(policy({ detection: BWRAP, always: true }), false, PATHS);
  expect('launcher' in sandboxed && sandboxed.launcher).toBeInstanceOf(BubblewrapLauncher);
});
