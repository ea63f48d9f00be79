import type { ParsedPipelineText } from '../pipeline/validate-pipeline.js';
import { loadProjectPipeline, type ProjectPipelineSources } from './load-project-pipeline.js';

/**
 * At most this many files beside the pipeline file are read (params.yaml, vars files,
 * other params files): each is a request when they come through an API, and a
 * `foreach` over file names must not turn one event into thousands of them.
 */
export const MAX_PROJECT_FILES = 32;

/** A project's pipeline sources whose files beside it are read asynchronously (an API). */
export interface AsyncProjectPipelineSources extends Omit<ProjectPipelineSources, 'readFile'> {
  /** A file beside the pipeline file, or undefined when there is none. */
  readFile(path: string): Promise<string | undefined>;
}

/**
 * loadProjectPipeline for a caller that reads files asynchronously (the GitHub App, through
 * the contents API at one commit): the same translation, run until it asks for no file it
 * has not been given. Which files a `dvc.yaml` reads is only known while it is translated
 * (a vars file may name the next; `params` entries name their files), so each pass records
 * what it missed, those are read together, and the next pass has them. Every file is
 * read once; more than MAX_PROJECT_FILES is a problem, with nothing else read.
 */
export async function loadProjectPipelineAsync(
  sources: AsyncProjectPipelineSources,
  parses?: Map<string, ParsedPipelineText>,
): Promise<ReturnType<typeof loadProjectPipeline>> {
  const files = new Map<string, string | undefined>();
  for (;;) {
    const missed = new Set<string>();
    const result = loadProjectPipeline(
      {
        ...sources,
        readFile: (path) => {
          if (!files.has(path)) missed.add(path);
          return files.get(path);
        },
      },
      parses,
    );
    if (missed.size === 0) return result;
    if (files.size + missed.size > MAX_PROJECT_FILES) {
      const message = `reads more than ${MAX_PROJECT_FILES} files beside ${sources.file} (params and vars files); at most ${MAX_PROJECT_FILES} are read`;
      return { pipeline: null, problems: [{ path: '', message }], notes: result.notes };
    }
    const read = await Promise.all(
      [...missed].map(async (path) => [path, await sources.readFile(path)] as const),
    );
    for (const [path, text] of read) files.set(path, text);
  }
}
