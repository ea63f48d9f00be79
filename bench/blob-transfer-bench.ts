import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { pino } from 'pino';
import { ControlPlaneClient } from '../client/control-plane-client.js';
import { readControlPlaneSettings } from '../app/control-plane-settings.js';
import { hashToken } from '../app/http/hash-token.js';
import { openControlPlaneDatabase } from '../app/open-control-plane-database.js';
import { blobDigest } from '../schemas/blob-digest.js';
import { Claim } from '../schemas/protocol/claim.js';
import { createApiToken } from '../store/tokens/create-api-token.js';
import { createRunner } from '../store/runners/create-runner.js';
import { startTestS3 } from '../test/helpers/s3-server.js';
import { ms } from './measure.js';
import { openScratchEnvironment, REDIS_URL } from './scratch-environment.js';

const FLUKSIO_BIN = path.join(import.meta.dirname, '..', 'bin', 'fluksio.js');
/** The output's size: 1 GiB, or `FLUKSIO_BENCH_BLOB_MIB` MiB for a quick look. */
const MIB = Number(process.env.FLUKSIO_BENCH_BLOB_MIB ?? 1024);

/**
 * A 1 GiB output uploaded by a runner's client (ControlPlaneClient.putBlob, as the daemon
 * does), through a `fluksio app` process that keeps blobs in its directory, and with
 * presigned URLs to an S3 API server (s3rver, in this process) through one that keeps
 * them in S3: the throughput of each, and the control plane process's peak RSS (VmHWM)
 * against its RSS before the upload. Each mode gets a control plane process of its own,
 * so its peak is that upload's.
 */
export async function benchBlobTransfer(): Promise<void> {
  const scratch = await openScratchEnvironment('blobs');
  const s3 = await startTestS3();
  const file = path.join(scratch.dataDir, 'model.bin');
  try {
    const digest = await writeOutput(file, MIB);
    console.log(`\nblob transfer: a ${MIB} MiB output uploaded by a runner`);
    const base = {
      DATABASE_URL: scratch.databaseUrl,
      REDIS_URL,
      FLUKSIO_QUEUE_PREFIX: scratch.prefix,
      FLUKSIO_DATA_DIR: path.join(scratch.dataDir, 'app'),
      FLUKSIO_MAX_BLOB_SIZE: '5GiB',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
    };
    const results: Record<string, { seconds: number; before: number; peak: number }> = {};
    for (const [mode, env] of [
      ['through the control plane', base],
      ['presigned URLs (S3)', { ...base, ...s3.env }],
    ] as const) {
      results[mode] = await uploadThrough(env, file, digest, MIB * 2 ** 20);
      const { seconds, before, peak } = results[mode];
      console.log(
        `  ${mode.padEnd(26)} ${(MIB / seconds).toFixed(0).padStart(5)} MiB/s (${ms(seconds * 1000)}); control plane RSS ${mib(before)} → peak ${mib(peak)}`,
      );
    }
    const proxied = results['through the control plane'];
    const direct = results['presigned URLs (S3)'];
    if (proxied && direct) {
      console.log(
        `  presigned / control plane: throughput ${(proxied.seconds / direct.seconds).toFixed(2)}×, control plane peak RSS growth ${mib(direct.peak - direct.before)} vs ${mib(proxied.peak - proxied.before)}`,
      );
    }
  } finally {
    await rm(file, { force: true });
    await s3.close();
    await scratch.close();
  }
}

/** Writes `mib` MiB that do not compress and resolves with their digest. */
async function writeOutput(file: string, mib: number): Promise<ReturnType<typeof blobDigest>> {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  const chunk = randomBytes(2 ** 20);
  for (let i = 0; i < mib; i += 1) {
    chunk.writeUInt32LE(i, 0);
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return blobDigest(hash.digest('hex'));
}

/** Starts a control plane with `env`, claims a run there and times one upload of `file`. */
async function uploadThrough(
  env: Record<string, string>,
  file: string,
  digest: ReturnType<typeof blobDigest>,
  size: number,
): Promise<{ seconds: number; before: number; peak: number }> {
  const settings = readControlPlaneSettings(env);
  const database = await openControlPlaneDatabase(settings, pino({ level: 'warn' }));
  const runnerToken = `fxr_${randomBytes(32).toString('base64url')}`;
  const submitToken = `fxt_${randomBytes(32).toString('base64url')}`;
  const suffix = randomBytes(3).toString('hex');
  await createRunner({
    db: database.db,
    name: `bench-${suffix}`,
    owner: 'bench',
    repositories: [],
    labels: [],
    tokenHash: hashToken(runnerToken),
  });
  await createApiToken({
    db: database.db,
    name: `bench-${suffix}`,
    repositories: ['bench/model'],
    scope: 'submit',
    tokenHash: hashToken(submitToken),
  });
  await database.close();
  const { child, url } = await startApp(env);
  try {
    const submitted = await fetch(`${url}/api/v1/runs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${submitToken}`,
        'content-type': 'application/json',
        'idempotency-key': suffix,
      },
      body: JSON.stringify({ repository: 'bench/model', commit: 'c'.repeat(40) }),
    });
    if (!submitted.ok) throw new Error(`submit answered ${submitted.status}: ${await submitted.text()}`);
    const client = new ControlPlaneClient({ url, token: runnerToken });
    const claim = Claim.parse(await client.claim(5, false));
    const before = await rss(child, 'VmRSS');
    const started = performance.now();
    await client.putBlob({ runId: claim.run.id, lease: claim.lease }, digest, {
      open: () => createReadStream(file),
      size,
    });
    const seconds = (performance.now() - started) / 1000;
    return { seconds, before, peak: await rss(child, 'VmHWM') };
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
}

/** `fluksio app` (the build `npm run bench` made) as a process of its own, once it listens. */
async function startApp(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [FLUKSIO_BIN, 'app'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /listening on (http\S+)/.exec(output);
      if (listening?.[1]) resolve(listening[1]);
    });
    child.once('exit', (code) => reject(new Error(`fluksio app exited with ${code}: ${output}`)));
  });
  return { child, url };
}

/** A process's resident memory in bytes, from /proc: `VmRSS` now, `VmHWM` its peak. */
async function rss(child: ChildProcess, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}
