import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { executeClaim } from '../../runner/daemon/execute-claim.js';
import type { ExecuteClaimOptions } from '../../runner/daemon/execute-claim-options.js';
import { GitWorkspace } from '../../runner/daemon/git-workspace.js';
import { LocalBlobCache } from '../../runner/daemon/local-blob-cache.js';
import { InterpreterDigests } from '../../runner/keys/interpreter-digests.js';
import { getStageLog } from '../../store/runs/get-stage-log.js';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { waitFor } from '../helpers/wait-for.js';

let database: TestDatabase;
let plane: TestControlPlane;
let repo: TestRepo;
let scratch: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({
    db: database.db,
    env: { FLUKSIO_HEARTBEAT_INTERVAL: '500ms', FLUKSIO_LEASE_TTL: '20s' },
  });
  scratch = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-resumed-log-')));
});
afterEach(async () => {
  // The runner's client is this process's: its keep-alive sockets would hold the close.
  const closed = plane.close();
  plane.server.server.closeAllConnections();
  await closed;
  await repo.cleanup();
  await rm(scratch, { recursive: true, force: true });
});

test('a stage that had printed before its runner died, executed again in the resumed attempt, shows its lines once', async () => {
  const go = path.join(scratch, 'go');
  repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
stages:
  train:
    cmd: echo "epoch 1" && echo "epoch 2" && until [ -e ${go} ]; do sleep 0.1; done && echo done > model.txt
    outs: [model.txt]
`,
      '.gitignore': 'model.txt\n',
    },
  });
  const repository = `local${repo.dir}`;
  const submitter = await plane.addApiToken({ repositories: [repository] });
  const { token } = await plane.addRunner({ name: 'box', owner: 'local' });
  const submitted = await plane.submit(submitter, {
    repository,
    cloneUrl: `file://${repo.dir}`,
    commit: (await repo.git('rev-parse', 'HEAD')).trim(),
  });
  expect(submitted.status, JSON.stringify(submitted.json)).toBe(201);

  const client = new ControlPlaneClient({ url: plane.url, token });
  const claim = await client.claim(0, false);
  if (!claim) throw new Error('the runner was offered no run');
  const workDir = path.join(scratch, 'work');
  const runner: Omit<ExecuteClaimOptions, 'claim'> = {
    slot: 0,
    client,
    git: new GitWorkspace({ workDir, environment: process.env }),
    blobCache: await LocalBlobCache.open({ root: path.join(workDir, 'blobs'), maxBytes: 1 << 20 }),
    interpreterDigests: new InterpreterDigests(null),
    acceptForks: false,
    sandbox: {
      detection: { bubblewrap: null, reason: 'not wanted here' },
      workDir,
      always: false,
      hidden: [workDir],
      hiddenFromForks: [],
      stageUser: null,
    },
    runnerEnvironment: process.env,
    secrets: {},
    jobs: 1,
    killGraceMs: 1000,
    stopSignal: new AbortController().signal,
    releaseGraceMs: 5000,
    eventSpool: { dir: path.join(scratch, 'spool'), maxMemoryBytes: 1 << 20 },
    logger: pino({ level: 'silent' }),
  };
  const trainLog = async () =>
    (await getStageLog({ db: database.db, runId: claim.run.id, stage: 'train' })) ?? [];

  // The first runner process starts train, whose lines are stored, and is then taken for
  // dead: a restarted runner resumes the run, and the lease's new epoch fences it off.
  const first = executeClaim({ ...runner, claim });
  await waitFor('train’s lines to be stored', async () => (await trainLog()).includes('epoch 2'), 60_000);
  const reply = await client.resume({ runId: claim.run.id, lease: claim.lease });
  expect(reply).toMatchObject({ started: true, finished: [] });
  expect(await first).toEqual({ end: 'lease-lost' });

  // The resumed attempt executes train again from its start (no job to re-attach to).
  await writeFile(go, '');
  const second = await executeClaim({
    ...runner,
    claim: reply.claim,
    resumed: { started: reply.started, nextSeq: reply.nextSeq, epoch: reply.epoch, finished: reply.finished },
  });
  expect(second).toEqual({ end: 'finished', status: 'succeeded' });
  // The run page and check run show train's output once, from the execution that finished.
  expect(await trainLog()).toEqual(['epoch 1', 'epoch 2']);
}, 120_000);
