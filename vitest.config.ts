import { defineConfig } from 'vitest/config';

/** What every test file runs under, in either project. */
const common = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks',
} as const;

export default defineConfig({
  test: {
    // Runs once, for both projects: it bundles the command and the run pages.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        test: {
          ...common,
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: ['test/slurm/**'],
          // Two files at a time on a 2-core machine (vitest would take one, cores - 1): most of
          // a file's time is spent waiting on the processes, databases and browsers it drives.
          // Every file isolates what it shares: its own database, Redis prefix, port, temp
          // directories, stage user and sleep markers.
          maxWorkers: 2,
        },
      },
      {
        test: {
          ...common,
          // One Slurm cluster of two CPUs and two GPUs serves every test that submits to it,
          // and some hold all of a resource to make a job pend: these files run one at a
          // time, after the others (vitest runs a single-worker project last).
          name: 'slurm',
          include: ['test/slurm/**/*.test.ts'],
          maxWorkers: 1,
        },
      },
    ],
  },
});
