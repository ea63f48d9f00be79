import { posix } from 'node:path';
import { parse } from 'yaml';
import { DvcTrackedFile } from '../../schemas/dvc/dvc-tracked-file.js';
import { normalizePipelinePath, pathContains, repoPathOf } from '../pipeline/pipeline-paths.js';

/** Data a `.dvc` file tracks, which fluksio does not fetch, and where it comes from. */
export interface DvcDataOrigin {
  /** The data the `.dvc` file tracks, relative to the pipeline's folder (`data/data.xml`). */
  path: string;
  /** The `.dvc` file, relative to the pipeline's folder (`data/data.xml.dvc`). */
  dvcFile: string;
  /**
   * `import`: `dvc import` from another repository; `import-url`: `dvc import-url` from a
   * URL or a path outside the project; `add`: `dvc add`, its bytes in a DVC remote.
   */
  kind: 'import' | 'import-url' | 'add';
  /** The repository (`import`) or URL (`import-url`) it comes from; null for `add`. */
  source: string | null;
}

/** What dvcDataOrigin may look at, handed in by the caller that can look (no I/O here). */
export interface DvcDataFiles {
  /** The pipeline file's folder relative to the repository root; '' at the root. */
  pipelineDir: string;
  /** Whether a repository-relative path exists. */
  exists(repoPath: string): boolean;
  /** A file by its path relative to the pipeline's folder, or undefined when there is none. */
  readFile(path: string): string | undefined;
}

/**
 * The `.dvc` file that tracks `path` (a pipeline-relative dep), if any. DVC names it after
 * its data (`data/data.xml.dvc`; `data/images.dvc` for a file inside `data/images`), so the
 * path and each folder holding it are looked for, and a file is read only where one
 * exists. Null when none tracks it, or when the file found is not one DVC writes.
 */
export function dvcDataOrigin(path: string, files: DvcDataFiles): DvcDataOrigin | null {
  const wanted = normalizePipelinePath(path);
  for (
    let candidate = wanted;
    candidate !== '.' && candidate !== '..';
    candidate = posix.dirname(candidate)
  ) {
    const dvcFile = `${candidate}.dvc`;
    const repoPath = repoPathOf(files.pipelineDir, dvcFile);
    if (repoPath === null || !files.exists(repoPath)) continue;
    const origin = readOrigin(dvcFile, files.readFile(dvcFile), wanted);
    if (origin) return origin;
  }
  return null;
}

/** The origin a `.dvc` file gives the data holding `wanted`, or null when it tracks other data or is not DVC's. */
function readOrigin(dvcFile: string, text: string | undefined, wanted: string): DvcDataOrigin | null {
  if (text === undefined) return null;
  let data: unknown;
  try {
    data = parse(text);
  } catch {
    return null;
  }
  const file = DvcTrackedFile.safeParse(data);
  if (!file.success) return null;
  const base = posix.join(posix.dirname(dvcFile), file.data.wdir ?? '.');
  const out = file.data.outs
    .map((each) => normalizePipelinePath(posix.join(base, each.path)))
    .find((each) => pathContains(each, wanted));
  if (out === undefined) return null;
  const dep = file.data.deps[0];
  if (dep === undefined) return { path: out, dvcFile, kind: 'add', source: null };
  return dep.repo
    ? { path: out, dvcFile, kind: 'import', source: dep.repo.url }
    : { path: out, dvcFile, kind: 'import-url', source: dep.path };
}
