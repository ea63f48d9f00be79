import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

/** `train` writes 300 kB of weights; `features` a directory out (a manifest and its files). */
const PIPELINE = `version: 1
stages:
  train:
    cmd: head -c 300000 /dev/zero > model.bin
    outs: [model.bin]
  features:
    cmd: mkdir -p feats && echo alpha > feats/a.txt && echo beta > feats/b.txt
    outs: [feats]
`;
const WEIGHTS = Buffer.alloc(300_000);
/** What S3 keeps as the weights' `x-amz-checksum-sha256`. */
const WEIGHTS_CHECKSUM = createHash('sha256').update(WEIGHTS).digest('base64');

let database: TestDatabase;
let world: ControlPlaneWorld;
let s3: TestS3;
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
  await s3.close();
});

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The control plane's `fluksio_blob_bytes_total`, by direction. */
async function bytesThroughControlPlane(): Promise<{ in: number; out: number }> {
  const text = await (await fetch(`${world.app.url}/metrics`)).text();
  const read = (direction: string): number =>
    Number(new RegExp(`^fluksio_blob_bytes_total\\{direction="${direction}"\\} (\\d+)`, 'm').exec(text)?.[1]);
  return { in: read('in'), out: read('out') };
}

// With a store that keeps no checksums (s3rver alone), and with one that keeps and verifies
// them as AWS S3 does (s3rver behind the checksum front): FLUKSIO_S3_VERIFY_CHECKSUMS follows.
test.each([{ checksums: false }, { checksums: true }])(
  'with S3 (checksums: $checksums), runners and fluksio pull move bytes with presigned URLs, a corrupted object is a cache miss that re-runs and mends it, and gc collects the bucket',
  async ({ checksums }) => {
    s3 = await startTestS3({ checksums });
    await world.start(s3.env);
    const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.bin\nfeats/\n' });
    await world.allow([project.repository]);
    const base = { repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit };
    const weightsKey = `sha256/${sha256(WEIGHTS)}`;

    // A run uploads its outputs straight to the bucket: none of their bytes reach the control plane.
    const first = await world.runner('box');
    const firstRun = await world.submit(base);
    expect((await world.waitFor(firstRun)).run.status).toBe('succeeded');
    expect(await s3.keys('sha256/')).toContain(weightsKey);
    expect(await s3.checksum(weightsKey)).toBe(checksums ? WEIGHTS_CHECKSUM : null);
    expect(await s3.keys('uploads/')).toEqual([]);
    expect(await bytesThroughControlPlane()).toEqual({ in: 0, out: 0 });

    // fluksio pull downloads from the bucket too, verified.
    const pull = await runCli(['pull', firstRun, '--to', 'pulled'], {
      cwd: project.repo.dir,
      env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
    });
    expect(pull.code, pull.stderr).toBe(0);
    expect((await readFile(join(project.repo.dir, 'pulled', 'model.bin'))).equals(WEIGHTS)).toBe(true);
    expect(await readFile(join(project.repo.dir, 'pulled', 'feats', 'b.txt'), 'utf8')).toBe('beta\n');
    expect(await bytesThroughControlPlane()).toEqual({ in: 0, out: 0 });

    // The weights are damaged in the bucket, under the checksum the store keeps. A runner
    // without them in its own cache downloads the damaged bytes: a miss, the stage runs
    // again, and its upload mends the object.
    await first.stop('SIGTERM');
    await s3.damage(weightsKey, 'not the weights');
    await world.runner('fresh-box');
    const secondRun = await world.submit(base);
    const second = await world.waitFor(secondRun);
    expect(second.run.status).toBe('succeeded');
    const train = second.stages.find((stage) => stage.name === 'train');
    expect(train?.status).toBe('ran');
    expect(train?.reasons.join('\n')).toContain('was corrupt');
    expect(second.stages.find((stage) => stage.name === 'features')?.status).toBe('cached');
    expect(sha256((await s3.read(weightsKey)) ?? '')).toBe(sha256(WEIGHTS));
    expect(await s3.checksum(weightsKey)).toBe(checksums ? WEIGHTS_CHECKSUM : null);
    expect(await bytesThroughControlPlane()).toEqual({ in: 0, out: 0 });

    // gc deletes what nothing references and keeps what the kept run and the cache name,
    // the files of the directory out (named only inside its manifest) among them.
    const orphan = `sha256/${sha256('nobody names this')}`;
    await s3.write(orphan, 'nobody names this');
    const kept = (await world.report(secondRun)).stages.flatMap((stage) => stage.outs);
    const gc = await runCli(['gc', '--keep-days', '0', '--json'], {
      cwd: world.app.dataDir,
      env: { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir, ...s3.env },
    });
    expect(gc.code, gc.stderr).toBe(0);
    expect(JSON.parse(gc.stdout)).toMatchObject({ store: `s3://${s3.bucket}` });
    const left = await s3.keys('sha256/');
    expect(left).not.toContain(orphan);
    for (const out of kept) expect(left).toContain(`sha256/${out.digest.slice(7)}`);
    for (const file of ['alpha\n', 'beta\n']) expect(left).toContain(`sha256/${sha256(file)}`);
  },
  300_000,
);
