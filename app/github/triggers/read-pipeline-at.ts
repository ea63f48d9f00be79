import { posix } from 'node:path';
import type { Pipeline } from '../../../schemas/pipeline.js';
import type { Problem } from '../../../core/problem.js';
import { PROJECT_PIPELINE_FILES } from '../../../core/dvc/load-project-pipeline.js';
import { loadProjectPipelineAsync } from '../../../core/dvc/load-project-pipeline-async.js';
import type { GitHubApi } from '../github-work.js';
import type { RepositoryRef } from '../repository-ref.js';
import { readFileAt } from './read-file-at.js';

/** The pipeline files as messages name them when there is none: `fluksio.yml nor dvc.yaml`. */
export const PIPELINE_FILES_TEXT = PROJECT_PIPELINE_FILES.join(' nor ');

/**
 * A commit's pipeline: absent, valid, or broken with every problem; `path` is the file
 * read (`fluksio.yml` or `dvc.yaml`), which the runs record so their runners load the same.
 */
export type PipelineAtCommit =
  | { state: 'absent' }
  | { state: 'valid'; path: string; pipeline: Pipeline; notes: string[] }
  | { state: 'broken'; path: string; problems: Problem[] };

/**
 * Reads the pipeline at exactly `commit` through the contents API and validates it
 * (DESIGN §8), before anything is queued: `fluksio.yml`, or where there is none `dvc.yaml`,
 * translated by the loader `fluksio run` and the runner use, with its params.yaml and
 * vars files read through the API at the same commit. Deps are not checked for existence
 * here (the runner checks them in its checkout, where the tree is at hand). A repository
 * with neither file is `absent`; any other API failure is thrown, for the delivery to be
 * retried.
 */
export async function readPipelineAt(
  api: GitHubApi,
  repository: RepositoryRef,
  commit: string,
): Promise<PipelineAtCommit> {
  // Where the App reads a repository's pipeline (DESIGN §3), as `fluksio run` looks for it.
  for (const path of PROJECT_PIPELINE_FILES) {
    const file = await readFileAt(api, repository, commit, path);
    if (file.state === 'absent') continue;
    if (file.state === 'unreadable') {
      return { state: 'broken', path, problems: [{ path: '', message: file.message }] };
    }
    const unreadable: Problem[] = [];
    const { pipeline, problems, notes } = await loadProjectPipelineAsync({
      file: path,
      text: file.text,
      pipelineDir: '',
      // translateDvc refuses a name outside the repository before asking for it.
      readFile: async (name) => {
        const beside = await readFileAt(api, repository, commit, posix.normalize(name));
        if (beside.state === 'unreadable') unreadable.push({ path: '', message: beside.message });
        return beside.state === 'file' ? beside.text : undefined;
      },
    });
    return pipeline
      ? { state: 'valid', path, pipeline, notes }
      : { state: 'broken', path, problems: [...unreadable, ...problems] };
  }
  return { state: 'absent' };
}
