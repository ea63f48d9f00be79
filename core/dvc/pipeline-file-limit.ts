import type { Problem } from '../problem.js';

/**
 * The most bytes a pipeline file (`fluksio.yml`, `dvc.yaml`) or a file read beside it
 * (params.yaml, a vars file) may hold, wherever it is read: the GitHub App parses a fork's
 * before anyone approved anything, and a megabyte of YAML costs it seconds per push. Real
 * pipelines are a few KiB.
 */
export const MAX_PIPELINE_FILE_BYTES = 256 * 1024;

/**
 * The problem of a file over MAX_PIPELINE_FILE_BYTES, or null for one within it: `beside`
 * names a file read beside the pipeline file; the pipeline file itself is the problem's
 * source already, which every message is shown after (`fluksio.yml: the file is …`).
 */
export function pipelineFileSizeProblem(text: string, beside?: string): Problem | null {
  // A UTF-16 code unit is at least one byte of UTF-8: a short text is measured no further.
  if (text.length * 3 <= MAX_PIPELINE_FILE_BYTES) return null;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= MAX_PIPELINE_FILE_BYTES) return null;
  return {
    path: '',
    message: `${beside ?? 'the file'} is ${bytes.toLocaleString('en-US')} bytes; a pipeline file, and each file read beside it, is at most ${MAX_PIPELINE_FILE_BYTES.toLocaleString('en-US')} bytes (256 KiB)`,
  };
}
