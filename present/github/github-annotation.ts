import type { Annotation } from '../../schemas/annotation.js';
import { GITHUB_LIMITS } from './github-limits.js';
import { clip, clipBytes } from './markdown.js';

/** One annotation as the Checks API takes it. */
export interface GitHubAnnotation {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'notice' | 'warning' | 'failure';
  message: string;
  title?: string;
}

/**
 * The annotations GitHub can show, in order: those on repository files, each within
 * GitHub's field limits. The others (no path, or a path leaving the repository) are
 * listed in the check run's text only.
 */
export function githubAnnotations(annotations: readonly Annotation[]): GitHubAnnotation[] {
  return annotations.flatMap((note) => {
    const converted = toGitHubAnnotation(note);
    return converted ? [converted] : [];
  });
}

/**
 * The annotations still to send, after the `sent` GitHub already holds, in requests of at
 * most 50 (GitHub appends each request's to the earlier ones). Always one page at least,
 * empty when nothing is left: the create or update that carries the output.
 */
export function annotationPages<T>(annotations: readonly T[], sent = 0): T[][] {
  const pages: T[][] = [];
  let from = sent;
  do {
    pages.push(annotations.slice(from, from + GITHUB_LIMITS.annotationsPerRequest));
    from += GITHUB_LIMITS.annotationsPerRequest;
  } while (from < annotations.length);
  return pages;
}

function toGitHubAnnotation(note: Annotation): GitHubAnnotation | null {
  const path = repositoryPath(note.path);
  if (path === null) return null;
  const line = note.line ?? 1;
  return {
    path,
    start_line: line,
    end_line: line,
    annotation_level: note.level === 'error' ? 'failure' : note.level,
    message: clipBytes(note.message || `${note.level} in stage ${note.stage}`, GITHUB_LIMITS.annotationBytes),
    title: clip(note.title ?? `stage ${note.stage}`, GITHUB_LIMITS.annotationTitle),
  };
}

/** `./src/x.py` → `src/x.py`; null for absolute paths, `..` escapes and empty paths. */
function repositoryPath(path: string | null): string | null {
  if (!path) return null;
  const normal = path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
  if (normal === '' || normal.startsWith('/') || /^[A-Za-z]:/.test(normal)) return null;
  if (normal.split('/').some((part) => part === '..')) return null;
  return normal;
}
