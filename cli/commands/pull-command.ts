import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { DirManifest, type OutRecord } from '../../schemas/out-record.js';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import { UnsafePathError } from '../../runner/workspace/unsafe-path-error.js';
import { resolveWorkspacePath } from '../../runner/workspace/workspace-path.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { CallOptions } from '../../client/control-plane-http.js';
import { declaredOutputs } from '../remote/declared-outputs.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';
import { resolveRemoteRun } from '../remote/resolve-remote-run.js';
import { UsageError } from '../../present/terminal/usage-error.js';

export interface PullCommandOptions {
  to?: string;
  url?: string;
  /** Replace files that exist with other contents. */
  force?: boolean;
  /** Print what was pulled as JSON (PullJson) instead of a line per output. */
  json?: boolean;
}

/** What `fluksio pull --json` prints. */
interface PullJson {
  run: string;
  /** The absolute directory the outputs were written under. */
  to: string;
  /** The outputs pulled, as the run recorded them. */
  outs: { path: string; kind: OutRecord['kind']; digest: string; size: number }[];
  /** The files written, relative to `to`. */
  written: string[];
  /** The files that already held exactly the run's bytes, so were left as they were. */
  unchanged: string[];
}

/** One file pull would write: where (relative to the target), what, and whether runnable. */
interface PlannedFile {
  path: string;
  /** The blob, or null for a directory to create (a directory out's empty ones, and its root). */
  digest: string | null;
  executable: boolean;
}

/**
 * `fluksio pull RUN [OUT]`: downloads a run's outputs (all of them, or the one named) into
 * the current directory (or --to DIR) at their pipeline paths, each verified against its
 * digest and written atomically. What a run reports comes from a runner, so every path is
 * checked before anything is written: it must be an out or metrics file that the
 * pipeline at the run's commit declares, and it is written only inside the target,
 * never through a symlink, never into `.git` or `.fluksio`, and never over a file with
 * other contents unless `--force` is given. One refused path means nothing is written.
 */
export async function pullCommand(
  runId: string,
  out: string | undefined,
  options: PullCommandOptions,
  io: CliIo,
): Promise<number> {
  const connection = serverConnection(options.url, io.env);
  const client = submitterClient(connection);
  const report = await client.run(await resolveRemoteRun(client, runId));
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
  if (report.run.commit === null)
    throw new UsageError(`Run ${report.run.id} has no commit to check its outputs against`);
  const declared = await declaredOutputs(io.cwd, report.run.commit, report.run.pipelinePath);
  const undeclared = wanted.filter((record) => !declared.has(normalizePipelinePath(record.path)));
  if (undeclared.length > 0) {
    throw new Error(
      `Run ${report.run.id} reports outputs its pipeline (${report.run.pipelinePath} at ${report.run.commit}) does not declare: ${undeclared.map((record) => `"${record.path}"`).join(', ')}; nothing was written`,
    );
  }

  const root = resolve(io.cwd, options.to ?? '.');
  await mkdir(root, { recursive: true });
  // Ctrl-C ends the download in progress; its temporary file goes, and no file is left half-written.
  const blobs: RunBlobs = { client, runId: report.run.id, call: io.signal ? { signal: io.signal } : {} };
  const planned: PlannedFile[] = [];
  for (const record of wanted) planned.push(...(await planOut(blobs, record)));
  const toWrite: PlannedFile[] = [];
  const unchanged: PlannedFile[] = [];
  const refused: string[] = [];
  for (const file of planned) {
    const verdict = await checkDestination(root, file, options.force === true);
    if (verdict === 'write') toWrite.push(file);
    else if (verdict === 'same') unchanged.push(file);
    else refused.push(verdict);
  }
  if (refused.length > 0) throw new UsageError(`${refused.join('\n')}\nNothing was written.`);

  let written = 0;
  for (const file of toWrite) {
    // Checked again right before the write: the tree may have changed since.
    const dest = await resolveWorkspacePath(root, file.path, { out: true });
    try {
      if (file.digest === null) await mkdir(dest, { recursive: true });
      else await download(blobs, { ...file, digest: file.digest }, dest);
    } catch (error) {
      if (!io.signal?.aborted) throw error;
      throw new Error(
        `Interrupted: ${written} of the ${toWrite.length} files and folders to write were written whole; "${file.path}" and the rest were not`,
        { cause: error },
      );
    }
    written += 1;
  }
  if (options.json) {
    const files = (list: PlannedFile[]) =>
      list.filter((file) => file.digest !== null).map((file) => file.path);
    const pulled: PullJson = {
      run: report.run.id,
      to: root,
      outs: wanted.map(({ path, kind, digest, size }) => ({ path, kind, digest, size })),
      written: files(toWrite),
      unchanged: files(unchanged),
    };
    io.stdout.write(`${JSON.stringify(pulled, null, 2)}\n`);
    return 0;
  }
  for (const record of wanted) {
    io.stdout.write(`${record.path}  ${record.digest.slice(0, 19)}  ${record.size} bytes\n`);
  }
  return 0;
}

/** Where a run's blobs are read from: the control plane, as a reader of that run. */
interface RunBlobs {
  client: ControlPlaneClient;
  runId: string;
  /** Ends a download (Ctrl-C). */
  call: CallOptions;
}

/** The files of one out: itself, or each file of its verified directory manifest. */
async function planOut(blobs: RunBlobs, record: OutRecord): Promise<PlannedFile[]> {
  const path = normalizePipelinePath(record.path);
  if (record.kind === 'file')
    return [{ path, digest: record.digest, executable: record.executable === true }];
  const bytes = await blobs.client.pullBlob(blobs.runId, record.digest, (body) => buffer(body), blobs.call);
  const actual = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (actual !== record.digest) {
    throw new Error(`${record.path}: its manifest hashes to ${actual}, not ${record.digest}`);
  }
  const parsed = DirManifest.safeParse(JSON.parse(bytes.toString('utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${record.path}: its manifest is not usable (${issue?.path.join('.')}: ${issue?.message}); nothing was written`,
    );
  }
  return [
    { path, digest: null, executable: false },
    ...(parsed.data.dirs ?? []).map((dir) => ({ path: `${path}/${dir}`, digest: null, executable: false })),
    ...parsed.data.files.map((file) => ({
      path: `${path}/${file.path}`,
      digest: file.digest,
      executable: file.executable,
    })),
  ];
}

/**
 * Whether a file may be written at its place under `root`: 'write', 'same' when the
 * place already holds exactly these bytes, or else the sentence saying why not.
 */
async function checkDestination(root: string, file: PlannedFile, force: boolean): Promise<string> {
  let dest: string;
  try {
    dest = await resolveWorkspacePath(root, file.path, { out: true });
  } catch (error) {
    if (error instanceof UnsafePathError) return `Refused: ${error.message}`;
    throw error;
  }
  const existing = await lstat(dest).catch(() => null);
  if (existing === null) return 'write';
  if (file.digest === null) {
    return existing.isDirectory() ? 'same' : `Refused: "${file.path}" exists and is not a directory`;
  }
  if (!existing.isFile()) return `Refused: "${file.path}" exists and is not a file`;
  if ((await digestOf(dest)) === file.digest) return 'same';
  return force
    ? 'write'
    : `Refused: "${file.path}" exists with other contents; pass --force to replace it with the run's output`;
}

async function digestOf(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Streams a blob into a temporary sibling, verifies it, and renames it into place; a
 * download cut short is tried again into a temporary file of its own.
 */
async function download(
  blobs: RunBlobs,
  file: PlannedFile & { digest: string },
  dest: string,
): Promise<void> {
  await mkdir(dirname(dest), { recursive: true });
  await blobs.client.pullBlob(
    blobs.runId,
    file.digest,
    async (body: Readable) => {
      const temp = `${dest}.fluksio-${randomBytes(6).toString('hex')}`;
      const hash = createHash('sha256');
      try {
        body.on('data', (chunk: Buffer) => hash.update(chunk));
        await pipeline(body, createWriteStream(temp, { flags: 'wx' }));
        const actual = `sha256:${hash.digest('hex')}`;
        if (actual !== file.digest)
          throw new Error(`${dest}: downloaded bytes hash to ${actual}, not ${file.digest}`);
        if (file.executable) await chmod(temp, 0o755);
        await rename(temp, dest);
      } finally {
        await rm(temp, { force: true });
      }
    },
    blobs.call,
  );
}
