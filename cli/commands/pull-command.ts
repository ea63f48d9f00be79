import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { DirManifest, type OutRecord } from '../../schemas/out-record.js';
import { normalizePipelinePath } from '../../schemas/pipeline-paths.js';
import { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { resolveWorkspacePath } from '../../runner/workspace-path.js';
import type { CliIo } from '../cli-io.js';
import { ApiClient } from '../remote/api-client.js';
import { serverConnection } from '../remote/server-connection.js';
import { UsageError } from '../usage-error.js';

export interface PullCommandOptions {
  to?: string;
  url?: string;
}

/**
 * `fluksio pull RUN [OUT]`: downloads a run's outputs (all of them, or the one named) into
 * the current directory (or --to DIR) at their pipeline paths, each verified against its
 * digest and written atomically; a path that would leave the directory is refused.
 */
export async function pullCommand(
  runId: string,
  out: string | undefined,
  options: PullCommandOptions,
  io: CliIo,
): Promise<number> {
  const connection = serverConnection(options.url, io.env);
  const client = new ApiClient(connection.url, connection.token);
  const report = await client.request('GET', `/api/v1/runs/${encodeURIComponent(runId)}`, RemoteRunReport);
  const outs = report.stages.flatMap((stage) => stage.outs);
  const wanted =
    out === undefined
      ? outs
      : outs.filter((record) => normalizePipelinePath(record.path) === normalizePipelinePath(out));
  if (wanted.length === 0) {
    const known = outs.map((record) => record.path).join(', ') || 'none';
    throw new UsageError(
      out === undefined
        ? `Run ${report.run.id} stored no outputs`
        : `Run ${report.run.id} has no output "${out}" (it has: ${known})`,
    );
  }
  const root = resolve(io.cwd, options.to ?? '.');
  await mkdir(root, { recursive: true });
  const download = async (digest: string, dest: string, executable: boolean) => {
    const response = await client.download(
      `/api/v1/blobs/${digest}?run=${encodeURIComponent(report.run.id)}`,
    );
    const temp = `${dest}.fluksio-${randomBytes(6).toString('hex')}`;
    const hash = createHash('sha256');
    try {
      await mkdir(dirname(dest), { recursive: true });
      const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
      body.on('data', (chunk: Buffer) => hash.update(chunk));
      await pipeline(body, createWriteStream(temp));
      const actual = `sha256:${hash.digest('hex')}`;
      if (actual !== digest) throw new Error(`${dest}: downloaded bytes hash to ${actual}, not ${digest}`);
      if (executable) await chmod(temp, 0o755);
      await rename(temp, dest);
    } finally {
      await rm(temp, { force: true });
    }
  };
  for (const record of wanted) {
    const dest = await resolveWorkspacePath(root, normalizePipelinePath(record.path));
    if (record.kind === 'file') await download(record.digest, dest, record.executable === true);
    else await pullDirectory(client, report.run.id, record, dest, download);
    io.stdout.write(`${record.path}  ${record.digest.slice(0, 19)}  ${record.size} bytes\n`);
  }
  return 0;
}

async function pullDirectory(
  client: ApiClient,
  runId: string,
  record: OutRecord,
  dest: string,
  download: (digest: string, dest: string, executable: boolean) => Promise<void>,
): Promise<void> {
  const response = await client.download(`/api/v1/blobs/${record.digest}?run=${encodeURIComponent(runId)}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  const actual = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (actual !== record.digest)
    throw new Error(`${record.path}: its manifest hashes to ${actual}, not ${record.digest}`);
  const manifest = DirManifest.parse(JSON.parse(bytes.toString('utf8')));
  await mkdir(dest, { recursive: true });
  for (const dir of manifest.dirs ?? [])
    await mkdir(await resolveWorkspacePath(dest, dir), { recursive: true });
  for (const file of manifest.files) {
    await download(file.digest, await resolveWorkspacePath(dest, file.path), file.executable);
  }
}
