import type { Stats } from 'node:fs';
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../core/canonical-json.js';
import type { ReadSet } from '../../schemas/read-set.js';
import type { CodeIndex } from './code-index.js';
import { fileStamp } from './file-stamp.js';
import { gitBlobIdOfFile } from '../workspace/git-blob-id.js';
import { gitFileMode } from '../workspace/git-file-mode.js';
import type { ReadTrace } from './read-trace.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import { pipelinePathIn, repoPathIn, type Workspace } from '../workspace/workspace.js';

/**
 * Names a module can be imported from: a file with a source or extension suffix, or a
 * package directory, whose name is an identifier (so not `.git`, a directory in a clone
 * and a file in a worktree). Bytecode is left out: it never counts as code (DESIGN §5).
 */
const MODULE_FILE = /\.(?:py|pyw|so|pyd)$/;
const PACKAGE_DIR = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Entries never keyed: bytecode caches and fluksio's own state. */
const NEVER_LISTED = new Set(['__pycache__', '.fluksio']);
/**
 * Kernel file times come from a clock that lags the wall clock by up to a tick: a file
 * written just after the stage started can carry a time a little before it.
 */
const CLOCK_SLACK_MS = 20;
/** Outs of one stage a sentence names before it counts the rest. */
const NAMED_OUTS = 3;

/** What a stage of the pipeline declares, repository-relative. */
export interface ProbedStage {
  deps: readonly string[];
  /** Its outs and metrics: made by the pipeline, not inputs. */
  outs: readonly string[];
}

export interface ReadSetProbeOptions {
  codeIndex: CodeIndex;
  /** Every stage of the pipeline by name. */
  stages: Readonly<Record<string, ProbedStage>>;
  /** How a repository-relative path is shown to the user (relative to the pipeline's folder). */
  show(repoPath: string): string;
}

/** A read set after a stage ran, and what it read that changed while it ran. */
export interface RecordedReadSet {
  readSet: ReadSet;
  changedWhileRunning: string[];
}

/**
 * Takes digests of what a traced stage read, cheaply: a file of the code index has its
 * blob id already (tracked, or untracked and not ignored), so only ignored files are
 * hashed; a directory is keyed on its entry names, leaving out bytecode caches and the
 * pipeline's outputs (they come and go with runs, and never decide what a stage computes
 * by being listed).
 */
export class ReadSetProbe {
  private readonly outs: Set<string>;
  /** Folders above an out: each is looked up in the code index the first time it is listed. */
  private readonly outAncestors: Set<string>;
  private readonly outsOnly = new Map<string, boolean>();

  constructor(private readonly options: ReadSetProbeOptions) {
    const outs = Object.values(options.stages).flatMap((stage) => stage.outs);
    this.outs = new Set(outs);
    this.outAncestors = new Set(outs.flatMap((out) => ancestorsOf(out)));
  }

  /**
   * The folders of a read set whose listing digest hides outs of other stages that `stage`
   * does not declare among its deps (nor a folder holding them, nor a part of them), one
   * phrase each: `lists results/, which holds outs of b (results/b.json) it does not
   * declare`. Empty when there are none. A listing leaves outs out so that a key does not
   * depend on which outs a machine holds; but then what such a stage computes depends on
   * whether the other stage ran before it, which no key can say: its result is neither
   * stored nor restored. Declared outs count whether or not a run made them yet, except
   * those of stages upstream of it (they are always there); a module listing (the import
   * system's) only hides outs that are modules.
   */
  undeclaredOutsListed(readSet: ReadSet, stage: string): string[] {
    const deps = this.options.stages[stage]?.deps ?? [];
    const declared = (out: string) => deps.some((dep) => within(out, dep) || within(dep, out));
    const upstream = this.upstreamOf(stage);
    const hidden = new Map<string, Map<string, string[]>>();
    for (const [other, { outs }] of Object.entries(this.options.stages)) {
      // A stage upstream of it, through a chain of deps, has always made its outs first.
      if (other === stage || upstream.has(other)) continue;
      for (const out of outs.filter((each) => !declared(each))) {
        for (const [dirs, modulesOnly] of [
          [readSet.dirs, false],
          [readSet.moduleDirs, true],
        ] as const) {
          for (const dir of Object.keys(dirs)) {
            if (!this.listingHides(dir, out, modulesOnly)) continue;
            const byStage = hidden.get(dir) ?? new Map<string, string[]>();
            byStage.set(other, [...(byStage.get(other) ?? []), out]);
            hidden.set(dir, byStage);
          }
        }
      }
    }
    return [...hidden.keys()].sort().map((dir) => {
      const byStage = [...(hidden.get(dir) ?? new Map<string, string[]>())];
      const named = byStage.map(([other, outs]) => {
        const shown = outs.slice(0, NAMED_OUTS).map((out) => this.show(out));
        const rest = outs.length - shown.length;
        return `${other} (${shown.join(', ')}${rest > 0 ? ` and ${rest} more` : ''})`;
      });
      const stages = named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
      return `lists ${this.showFolder(dir)}, which holds outs of ${stages} it does not declare`;
    });
  }

  /**
   * The stages `stage` depends on through its deps, directly or through a chain: each
   * one's outs are made before it runs, on every run, so its listings show them alike.
   */
  private upstreamOf(stage: string): Set<string> {
    const stages = Object.entries(this.options.stages);
    const found = new Set<string>();
    const pending = [stage];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const dep of this.options.stages[next]?.deps ?? []) {
        for (const [producer, { outs }] of stages) {
          if (producer === stage || found.has(producer)) continue;
          if (!outs.some((out) => within(dep, out) || within(out, dep))) continue;
          found.add(producer);
          pending.push(producer);
        }
      }
    }
    return found;
  }

  /**
   * Whether the digest of a listing of `dir` leaves out the entry through which `out`
   * would show: the out itself, or a folder holding only outs. A module listing keys only
   * names a module can be imported from, so there only an out that is a module counts.
   */
  private listingHides(dir: string, out: string, modulesOnly: boolean): boolean {
    if (dir === out || !within(out, dir)) return false;
    const below = dir === '.' ? out : out.slice(dir.length + 1);
    const child = dir === '.' ? below.split('/')[0] : `${dir}/${below.split('/')[0]}`;
    if (child === undefined || (!this.outs.has(child) && !this.folderOfOutsOnly(child))) return false;
    return !modulesOnly || MODULE_FILE.test(out);
  }

  /**
   * The read set of a finished stage, without what its key holds already (`exclude`: its
   * deps and its own outs, and everything under them), and what it read that changed
   * while it ran (see `changedWhileRunning`): the digest of such a file would not be what
   * the stage read. The files of `putBack` (of the code index) were rewritten by fluksio
   * itself and put back byte for byte (a DVC params file holds a run's values while a stage
   * runs): only their content counts, so a run with `train.lr=0.1` is stored.
   */
  async record(
    trace: ReadTrace,
    exclude: readonly string[],
    since: { stage: number; run: number },
    putBack: ReadonlySet<string> = new Set(),
  ): Promise<RecordedReadSet> {
    const excluded = (repoPath: string) =>
      exclude.some((each) => repoPath === each || repoPath.startsWith(`${each}/`));
    const readSet: ReadSet = { files: {}, dirs: {}, moduleDirs: {}, lookups: {} };
    const changedWhileRunning: string[] = [];
    for (const file of trace.files.filter((each) => !excluded(each))) {
      readSet.files[file] = await this.fileDigest(file);
      const stats = await lstat(this.absolute(file)).catch(() => null);
      const changed = putBack.has(file)
        ? await this.contentChanged(file, readSet.files[file])
        : stats !== null && this.changedWhileRunning(file, stats, since);
      if (changed) changedWhileRunning.push(file);
    }
    // What a lookup saw, as it saw it. A folder above a dep or an out is there whenever they
    // are, and the stage makes its outs' folders (restoring them makes them too).
    const above = (repoPath: string) => exclude.some((each) => within(each, repoPath) && each !== repoPath);
    for (const [where, state] of Object.entries(trace.lookups)) {
      if (excluded(where) || above(where)) continue;
      if (state === null) changedWhileRunning.push(where);
      else (readSet.lookups ??= {})[where] = state;
    }
    for (const dir of trace.dirs) readSet.dirs[dir] = await this.dirDigest(dir, false);
    for (const dir of trace.moduleDirs) readSet.moduleDirs[dir] = await this.dirDigest(dir, true);
    return { readSet, changedWhileRunning };
  }

  /**
   * What differs between a read set and the repository now, one phrase per path
   * (`conf/x.json changed`); empty when an entry with this read set is a hit. Stops at
   * the first difference unless `all`.
   */
  async changes(readSet: ReadSet, all = false): Promise<string[]> {
    const found: string[] = [];
    for (const [file, digest] of Object.entries(readSet.files)) {
      const now = await this.fileDigest(file);
      if (now === digest) continue;
      const what = digest === null ? 'appeared' : now === null ? 'was removed' : 'changed';
      found.push(`${this.show(file)} ${what}`);
      if (!all) return found;
    }
    for (const [where, state] of Object.entries(readSet.lookups ?? {})) {
      const now = await lookupState(this.absolute(where), state.startsWith('lstat ') ? 'lstat' : 'stat');
      if (now === state) continue;
      const what = state.endsWith(' absent')
        ? 'appeared'
        : now.endsWith(' absent')
          ? 'was removed'
          : 'changed';
      found.push(`${this.show(where)} ${what}`);
      if (!all) return found;
    }
    for (const [kind, dirs] of [
      ['entries', readSet.dirs],
      ['modules', readSet.moduleDirs],
    ] as const) {
      for (const [dir, digest] of Object.entries(dirs)) {
        if ((await this.dirDigest(dir, kind === 'modules')) === digest) continue;
        found.push(`${kind} added to or removed from ${this.showFolder(dir)}`);
        if (!all) return found;
      }
    }
    return found;
  }

  /**
   * Whether a file a stage read, lstat-ed now, may not be the version its digest was
   * taken from. A file of the code index has its id from when the index was read: it
   * changed if its inode, size or mtime are no longer those the id was taken under, or
   * if it was written after the run started (a rewrite within the clock tick of that read
   * could keep all three). Its ctime is not asked: handing the checkout to a stage user
   * (chownTree, before each stage) changes it and nothing else. A file hashed now changed
   * if either of its times is after the stage's start.
   */
  private changedWhileRunning(file: string, stats: Stats, since: { stage: number; run: number }): boolean {
    const { codeIndex } = this.options;
    if (codeIndex.files.has(file)) {
      const stamp = codeIndex.stamps.get(file);
      const rewritten = stamp !== undefined && stamp !== fileStamp(stats.ino, stats.size, stats.mtimeMs);
      return rewritten || stats.mtimeMs >= since.run - CLOCK_SLACK_MS;
    }
    return Math.max(stats.mtimeMs, stats.ctimeMs) >= since.stage - CLOCK_SLACK_MS;
  }

  /**
   * Whether a file's bytes now are not those of `digest`, its id in the code index from
   * when the run started: an edit since (before the stage or while it ran) shows.
   */
  private async contentChanged(file: string, digest: string | null): Promise<boolean> {
    const absolute = this.absolute(file);
    const stats = await lstat(absolute).catch(() => null);
    // A link or a folder in its place is no file fluksio put back.
    if (!stats?.isFile()) return true;
    const id = await gitBlobIdOfFile(absolute, this.options.codeIndex.objectFormat).catch(() => null);
    return id === null || `${gitFileMode(stats)} ${id}` !== digest;
  }

  /** A repository-relative path as the user sees it. */
  show(repoPath: string): string {
    return this.options.show(repoPath);
  }

  /** A repository-relative folder as the user sees it: `results/`, or the pipeline's folder. */
  private showFolder(repoPath: string): string {
    const shown = this.show(repoPath);
    return shown === '.' ? "the pipeline's folder" : `${shown}/`;
  }

  private absolute(repoPath: string): string {
    return path.join(this.options.codeIndex.repoRoot, repoPath);
  }

  private async fileDigest(repoPath: string): Promise<string | null> {
    const indexed = this.options.codeIndex.files.get(repoPath);
    if (indexed !== undefined) return indexed;
    const stats = await lstat(this.absolute(repoPath)).catch(() => null);
    if (stats === null) return null;
    if (stats.isDirectory()) return `directory ${await this.dirDigest(repoPath, false)}`;
    return gitBlobIdOfFile(this.absolute(repoPath), this.options.codeIndex.objectFormat).catch(() => null);
  }

  /** Folders that only hold outputs (`data/`, `metrics/`): they appear once a stage ran. */
  private folderOfOutsOnly(repoPath: string): boolean {
    if (!this.outAncestors.has(repoPath)) return false;
    let outsOnly = this.outsOnly.get(repoPath);
    if (outsOnly === undefined) {
      const prefix = `${repoPath}/`;
      outsOnly = true;
      // An out the work tree holds untracked (not ignored) is in the code index, and is
      // still the pipeline's: only a file no stage makes keeps the folder listed.
      for (const file of this.options.codeIndex.files.keys()) {
        if (file.startsWith(prefix) && !this.isOut(file)) {
          outsOnly = false;
          break;
        }
      }
      this.outsOnly.set(repoPath, outsOnly);
    }
    return outsOnly;
  }

  /** Whether a repository path is a declared out or inside one. */
  private isOut(repoPath: string): boolean {
    return this.outs.has(repoPath) || ancestorsOf(repoPath).some((ancestor) => this.outs.has(ancestor));
  }

  private async dirDigest(repoPath: string, modulesOnly: boolean): Promise<string | null> {
    const entries = await readdir(this.absolute(repoPath), { withFileTypes: true }).catch(() => null);
    if (entries === null) return null;
    const names = entries
      .filter((entry) => !NEVER_LISTED.has(entry.name))
      .filter(
        (entry) =>
          !modulesOnly ||
          MODULE_FILE.test(entry.name) ||
          ((entry.isDirectory() || entry.isSymbolicLink()) && PACKAGE_DIR.test(entry.name)),
      )
      .map((entry) => entry.name)
      .filter((name) => {
        const child = repoPath === '.' ? name : `${repoPath}/${name}`;
        return !this.outs.has(child) && !this.folderOfOutsOnly(child);
      })
      .sort();
    return sha256Hex(names.join('\0'));
  }
}

/**
 * What a lookup of `absolute` sees now, in the words of READ_TRACE_HOOK's `E` lines: `stat`
 * follows a last link, `lstat` does not. An error other than a missing path is a state no
 * traced lookup recorded (the hook leaves such a stage untraced), so it never matches.
 */
async function lookupState(absolute: string, how: 'stat' | 'lstat'): Promise<string> {
  let stats: Stats;
  try {
    stats = how === 'stat' ? await stat(absolute) : await lstat(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? `${how} absent`
      : `${how} unreadable (${code ?? 'error'})`;
  }
  if (stats.isDirectory()) return `${how} dir`;
  if (stats.isFile()) return `${how} file ${stats.size} ${(stats.mode & 0o100) !== 0 ? 'x' : '-'}`;
  if (stats.isSymbolicLink()) return `${how} link ${await readlink(absolute).catch(() => '?')}`;
  return `${how} other`;
}

/** Whether a repository path is `folder` or inside it (every path is inside `.`). */
function within(repoPath: string, folder: string): boolean {
  return folder === '.' || repoPath === folder || repoPath.startsWith(`${folder}/`);
}

function ancestorsOf(repoPath: string): string[] {
  const parts = repoPath.split('/');
  return parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join('/'));
}

/** The probe of a pipeline's stages: every stage's outs and metrics are made, not read. */
export function pipelineReadSetProbe(
  workspace: Workspace,
  pipeline: Pick<Pipeline, 'stages'>,
  codeIndex: CodeIndex,
): ReadSetProbe {
  const inRepo = (paths: readonly string[]) => paths.map((path) => repoPathIn(workspace, path));
  return new ReadSetProbe({
    codeIndex,
    stages: Object.fromEntries(
      Object.entries(pipeline.stages).map(([name, each]) => [
        name,
        { deps: inRepo(each.deps), outs: inRepo([...each.outs, ...each.metrics]) },
      ]),
    ),
    show: (repoPath) => pipelinePathIn(workspace, repoPath),
  });
}
