import { totalmem } from 'node:os';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/**
 * The fork author's stage, in its sandbox, looking for memory to fill: a tmpfs is RAM
 * the kernel charges to no process, so filling one makes the OOM killer pick someone
 * else (the runner, the database). It writes into the masked `/run` and into the
 * masked home (as tools write caches), and prints how large its scratch directories
 * and the masks are; it does not fill them, on a machine shared with other tests.
 */
const PROBE = String.raw`#!/bin/sh
work_dir=$1
runner_home=$2
try() { if sh -c "$2" 2>/dev/null; then echo "$1=yes"; else echo "$1=no"; fi; }
try run "echo x > /run/planted"
try tmp "head -c 1048576 /dev/zero > /tmp/scratch"
try home "mkdir -p $HOME/.cache/tool && echo x > $HOME/.cache/tool/file"
for dir in /tmp /var/tmp /dev/shm "$work_dir" "$runner_home"; do echo "size $dir=$(df -B1 --output=size "$dir" | tail -n 1 | tr -d ' ')"; done
echo done > out.txt
`;

const PIPELINE = `version: 1
params:
  work_dir: { type: string, default: "" }
  runner_home: { type: string, default: "" }
stages:
  probe:
    cmd: sh probe.sh \${work_dir} \${runner_home}
    params: [work_dir, runner_home]
    outs: [out.txt]
`;

test('a sandboxed stage cannot write into /run, and its scratch directories and masks hold a bounded part of the memory', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, 'probe.sh': PROBE, '.gitignore': 'out.txt\n' });
  await world.allow([project.repository]);
  const runner = await world.runner('forks', { args: ['--accept-forks'] });
  await runner.waitFor(/runner started/);

  // The stage's own HOME is a private folder; the runner's home is masked where it stands.
  const runId = await world.queueForkRun(project, {
    work_dir: runner.workDir,
    runner_home: process.env.HOME ?? '',
  });
  const report = await world.waitFor(runId);
  expect(report.run.status, JSON.stringify(report)).toBe('succeeded');
  expect(report.sandbox).toMatch(/^bubblewrap \d/);
  const response = await fetch(`${world.app.url}/api/v1/runs/${runId}/logs/probe`, {
    headers: { authorization: `Bearer ${world.apiToken}` },
  });
  const { lines } = (await response.json()) as { lines: string[] };
  const said = Object.fromEntries(lines.map((line) => line.split('=') as [string, string]));
  expect(said).toMatchObject({ run: 'no', tmp: 'yes', home: 'yes' });
  const sizes = ['/tmp', '/var/tmp', '/dev/shm'].map((dir) => Number(said[`size ${dir}`]));
  for (const size of sizes) expect(size).toBeGreaterThan(0);
  expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(totalmem() / 2);
  // The masks over the runner's work directory and home: writable, but bounded too.
  for (const dir of [runner.workDir, process.env.HOME ?? '']) {
    const size = Number(said[`size ${dir}`]);
    expect(size, dir).toBeGreaterThan(0);
    expect(size, dir).toBeLessThanOrEqual(totalmem() / 16);
  }
}, 180_000);
