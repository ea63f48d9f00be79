import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { FakeControlPlane } from '../runner-daemon/helpers/fake-control-plane.js';
import { makeClaim } from '../runner-daemon/helpers/make-claim.js';
import { startRunner, type RunnerProcess } from '../runner-daemon/helpers/runner-process.js';

let plane: FakeControlPlane;
let repo: TestRepo;
let workDir: string;
let runner: RunnerProcess | null = null;
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
  workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-'));
});
afterEach(async () => {
  await runner?.stop('SIGKILL');
  runner = null;
  await plane.stop();
  await repo?.cleanup();
  // What a stage made immutable (below) is made removable again first.
  await promisify(execFile)('chattr', ['-R', '-i', workDir]).catch(() => undefined);
  await rm(workDir, { recursive: true, force: true });
});

const SECRET = 'hf_Kd93sekretQw7rT1nBv5y';

/**
 * A trusted run's stages name files after the runner's secret: `plant` creates one in the
 * repository while it runs (with `plant=1`), so the code changed under it and under the
 * run; `late`, keyed on the whole code, then finds it among the code files added since the
 * previous run; `reader`, a traced Python stage, tries to open one, so its read set holds
 * it. What the runner says about those changes (a stage's `dirtyReasons` and `reasons`,
 * the run's `dirtyReasons`) and the key inputs it sends with each stage reach the control
 * plane, its check runs and pages: the secret must not.
 */
const PIPELINE = `version: 1
params:
  plant: { type: int, default: 0 }
stages:
  plant:
    cmd: |-
      if [ \${plant} = 1 ]; then touch "$HF_TOKEN.py"; fi
      echo planted > planted.txt
    params: [plant]
    outs: [planted.txt]
  late:
    cmd: cat planted.txt > late.txt
    deps: [planted.txt]
    outs: [late.txt]
  reader:
    cmd: python3 read.py
    deps: [read.py]
`;

const READ_PY = `import os

try:
    open(os.environ["HF_TOKEN"] + ".cfg")
except OSError:
    pass
`;

test("a runner's secret in the names of files a stage creates or reads reaches no reason, key input, finish or log", async () => {
  repo = await makeRepo({
    files: { 'fluksio.yml': PIPELINE, 'read.py': READ_PY, '.gitignore': '*.txt\n' },
  });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const envFile = path.join(workDir, 'secrets.env');
  await writeFile(envFile, `HF_TOKEN=${SECRET}\n`);
  runner = startRunner({ workDir, envFile }, { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token });
  const first = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, params: { plant: 0 } }));
  const firstRun = await plane.waitFor(first.claim.run.id, (candidate) => candidate.finish !== null);
  expect(firstRun.finish?.status, firstRun.finish?.reason ?? '').toBe('succeeded');
  const second = plane.enqueue(makeClaim({ repoDir: repo.dir, commit, params: { plant: 1 } }));
  const secondRun = await plane.waitFor(second.claim.run.id, (candidate) => candidate.finish !== null);
  expect(secondRun.finish?.status, secondRun.finish?.reason ?? '').toBe('succeeded');

  const stages = [...firstRun.events.values(), ...secondRun.events.values()].flatMap((event) =>
    event.type === 'stage.finished' ? [event.stage] : [],
  );
  const last = (name: string) => stages.filter((stage) => stage.name === name).at(-1);
  // The secret was there to be leaked: each of these sentences names the file the stage made.
  expect(last('plant')?.dirtyReasons.join('\n')).toContain('code changed while plant ran: ***.py added');
  expect(secondRun.finish?.dirtyReasons?.join('\n')).toContain('***.py added');
  expect(last('late')?.reasons).toContain('***.py added');
  expect(Object.keys(last('reader')?.keyInputs?.readSet?.files ?? {})).toContain('***.cfg');
  // Inputs that name a secret are not stored as a cache entry: masked, they would not hash to its key.
  expect(last('reader')).toMatchObject({ status: 'ran', cacheKey: null });
  expect(last('reader')?.notes).toContain(
    'reader: its key inputs hold a secret (shown as ***): its result is not cached',
  );
  expect([...plane.cache.values()].map((entry) => entry.stage)).not.toContain('reader');

  const everything =
    JSON.stringify([...firstRun.events.values(), ...secondRun.events.values()]) +
    JSON.stringify([firstRun.finish, secondRun.finish]) +
    JSON.stringify([...plane.cache.values()]) +
    // Blobs too: its logs, and the code manifests that name the files behind a code digest.
    [...plane.blobs.values()].map((blob) => blob.toString('utf8')).join('\n') +
    (runner.output() ?? '');
  for (let at = 0; at + 8 <= SECRET.length; at++) expect(everything).not.toContain(SECRET.slice(at, at + 8));
});

/**
 * A trusted run's stage leaves a file named after the secret in the checkout where the next
 * run's clean cannot remove it (immutable here, where the stage runs as root; a folder
 * without write permission for a stage of another user): that run fails before anything
 * runs, saying which file is left — in its reason, which its check run shows.
 */
test("a runner's secret in the name of a file the checkout's clean cannot remove reaches no reason of the next run", async () => {
  const pipeline = `version: 1
stages:
  stuck:
    cmd: mkdir -p keep && touch "keep/$HF_TOKEN.txt" && chattr +i "keep/$HF_TOKEN.txt"
`;
  repo = await makeRepo({ files: { 'fluksio.yml': pipeline } });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const envFile = path.join(workDir, 'secrets.env');
  await writeFile(envFile, `HF_TOKEN=${SECRET}\n`);
  runner = startRunner({ workDir, envFile }, { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token });
  const first = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
  const firstRun = await plane.waitFor(first.claim.run.id, (candidate) => candidate.finish !== null);
  expect(firstRun.finish?.status, firstRun.finish?.reason ?? '').toBe('succeeded');
  const second = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
  const secondRun = await plane.waitFor(
    second.claim.run.id,
    (candidate) => candidate.finish !== null || candidate.release !== null,
  );
  const ended = JSON.stringify([secondRun.finish, secondRun.release]);
  // The file was there to be named: the run did not start.
  expect(ended).toContain('keep/***.txt');
  const everything = ended + JSON.stringify([...secondRun.events.values()]) + (runner.output() ?? '');
  for (let at = 0; at + 8 <= SECRET.length; at++) expect(everything).not.toContain(SECRET.slice(at, at + 8));
});

/**
 * The sentence saying what changed while a stage ran is cut at 1000 characters: a file
 * whose path puts the secret across that cut must not leave its first characters, which
 * no mask finds once the rest is gone, in the stage's and the run's dirty reasons.
 */
test("a runner's secret across the cut of a long dirty reason leaves no piece of itself", async () => {
  // `code changed while plant ran: ` and 960 characters of folders put the secret at 990.
  const folders = [...Array.from({ length: 4 }, () => 'x'.repeat(200)), 'y'.repeat(155)].join('/');
  const pipeline = `version: 1
stages:
  plant:
    cmd: mkdir -p ${folders} && touch "${folders}/$HF_TOKEN.py"
`;
  repo = await makeRepo({ files: { 'fluksio.yml': pipeline } });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const envFile = path.join(workDir, 'secrets.env');
  await writeFile(envFile, `HF_TOKEN=${SECRET}\n`);
  runner = startRunner({ workDir, envFile }, { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token });
  const claimed = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
  const run = await plane.waitFor(claimed.claim.run.id, (candidate) => candidate.finish !== null);
  expect(run.finish?.status, run.finish?.reason ?? '').toBe('succeeded');
  // The sentence was long enough to be cut.
  expect(run.finish?.dirtyReasons).toEqual([
    expect.stringMatching(/^code changed while plant ran: x{200}\/.*…$/),
  ]);
  const everything =
    JSON.stringify([...run.events.values()]) + JSON.stringify(run.finish) + (runner.output() ?? '');
  for (let at = 0; at + 8 <= SECRET.length; at++) expect(everything).not.toContain(SECRET.slice(at, at + 8));
});

/**
 * A secret with `%`, `:`, `,` or `@` in it (a database password) printed escaped, as tools
 * print it: in a workflow command, escaped as `@actions/core` escapes (`%25`, and `%3A`,
 * `%2C` in a property), which the runner unescapes into an annotation's message and title
 * and a metric's name; and percent-encoded in a URL. Neither the log line nor what the
 * runner makes of it may hold it, escaped or not.
 */
test("a runner's secret printed escaped in a workflow command or a URL reaches no annotation, metric or log", async () => {
  const password = 'db%Pw:Zq8sekret,Vy3kP0wLm@x';
  const pipeline = `version: 1
stages:
  connect:
    cmd: |-
      E=$(printf '%s' "$DB_PASSWORD" | sed -e 's/%/%25/g' -e 's/:/%3A/g' -e 's/,/%2C/g')
      M=$(printf '%s' "$DB_PASSWORD" | sed -e 's/%/%25/g')
      echo "::error title=$E::login failed with $M"
      echo "::metric name=$E::1"
      echo "connecting to postgres://app:$(python3 -c 'import os, urllib.parse; print(urllib.parse.quote(os.environ["DB_PASSWORD"], safe=""))')@db/x"
`;
  repo = await makeRepo({ files: { 'fluksio.yml': pipeline } });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const envFile = path.join(workDir, 'secrets.env');
  await writeFile(envFile, `DB_PASSWORD='${password}'\n`);
  runner = startRunner({ workDir, envFile }, { FLUKSIO_URL: plane.url, FLUKSIO_RUNNER_TOKEN: plane.token });
  const claimed = plane.enqueue(makeClaim({ repoDir: repo.dir, commit }));
  const run = await plane.waitFor(claimed.claim.run.id, (candidate) => candidate.finish !== null);
  expect(run.finish?.status, run.finish?.reason ?? '').toBe('succeeded');
  const events = [...run.events.values()];
  // The commands were read: the secret was there to be leaked.
  expect(events.filter((event) => event.type === 'annotation')).toHaveLength(1);
  expect(events.filter((event) => event.type === 'metric.points')).toHaveLength(1);
  expect(JSON.stringify(events)).toContain('connecting to postgres://app:***@db/x');
  const everything = JSON.stringify(events) + JSON.stringify(run.finish) + (runner.output() ?? '');
  for (let at = 0; at + 8 <= password.length; at++) {
    expect(everything).not.toContain(password.slice(at, at + 8));
  }
});
