import { posix } from 'node:path';

/**
 * A pipeline-relative path as one canonical spelling: `./data/` and `data` are the same
 * out. Returns null for a path that leaves the pipeline's directory through `..` past
 * the repository root (`pipelineDir` is the file's directory relative to that root).
 */
export function repoPathOf(pipelineDir: string, path: string): string | null {
  const joined = posix.normalize(posix.join(pipelineDir || '.', path)).replace(/\/+$/, '');
  if (joined === '..' || joined.startsWith('../') || posix.isAbsolute(joined)) return null;
  return joined === '' ? '.' : joined;
}

/** Pipeline-relative path normalized the same way, for comparing deps with outs. */
export function normalizePipelinePath(path: string): string {
  return posix.normalize(path).replace(/\/+$/, '') || '.';
}

/** True when `inner` is `outer` or lies inside it (both normalized). */
export function pathContains(outer: string, inner: string): boolean {
  return outer === '.' || inner === outer || inner.startsWith(`${outer}/`);
}
