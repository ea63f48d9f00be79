import { posix } from 'node:path';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { PipelineContext } from '../pipeline/pipeline-rules.js';
import { validatePipeline, type ParsedPipelineText } from '../pipeline/validate-pipeline.js';
import type { Problem } from '../problem.js';
import { pipelineFileSizeProblem } from './pipeline-file-limit.js';
import { translateDvc } from './translate-dvc.js';

/** The file a DVC project's pipeline is read from where there is no fluksio.yml. */
export const DVC_FILE = 'dvc.yaml';

/**
 * Where a project's pipeline is looked for when none is named, in order (`fluksio run`, the
 * action, the GitHub App): `fluksio.yml`, else a DVC project's `dvc.yaml`, adopted unchanged.
 */
export const PROJECT_PIPELINE_FILES = ['fluksio.yml', DVC_FILE] as const;

/** A project's pipeline file and what beside it can be read, handed in by the caller that can look. */
export interface ProjectPipelineSources extends PipelineContext {
  /** The pipeline file's path (only its name is looked at: `dvc.yaml` is translated). */
  file: string;
  /** Its text. */
  text: string;
  /** A file beside it (params.yaml, a vars file), or undefined when there is none. */
  readFile(path: string): string | undefined;
}

/**
 * "The project's pipeline", wherever it is read (`fluksio run`, `fluksio submit`, the
 * runner): a `fluksio.yml` validated, or a `dvc.yaml` translated with its params.yaml and
 * vars files, with what of it cannot be honoured in `notes`. Every problem at once. A
 * file over MAX_PIPELINE_FILE_BYTES is a problem, never parsed.
 */
export function loadProjectPipeline(
  sources: ProjectPipelineSources,
  parses?: Map<string, ParsedPipelineText>,
): { pipeline: Pipeline | null; problems: Problem[]; notes: string[] } {
  const { file, text, ...context } = sources;
  const tooLarge = pipelineFileSizeProblem(text);
  if (tooLarge) return { pipeline: null, problems: [tooLarge], notes: [] };
  const oversized: Problem[] = [];
  const readFile = (path: string) => {
    const beside = sources.readFile(path);
    const problem = beside === undefined ? null : pipelineFileSizeProblem(beside, path);
    if (problem === null) return beside;
    oversized.push(problem);
    return '';
  };
  if (posix.basename(file.replaceAll('\\', '/')) !== DVC_FILE) {
    return { ...validatePipeline(text, context, parses), notes: [] };
  }
  const translated = translateDvc({ ...context, dvcYaml: text, readFile });
  return oversized.length === 0
    ? translated
    : { pipeline: null, problems: oversized, notes: translated.notes };
}
