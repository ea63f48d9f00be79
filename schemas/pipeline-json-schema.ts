import { z } from 'zod';
import { Pipeline } from './pipeline.js';

/**
 * The JSON Schema of `fluksio.yml`, generated from the zod schema so the two never
 * disagree. Editors use the committed copy (`schemas/fluksio.schema.json`); a test
 * pins it to this output. Describes the file as written (inputs, before defaults).
 */
export function pipelineJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(Pipeline, { io: 'input', unrepresentable: 'any' }),
    $id: 'https://fluksio.dev/schemas/fluksio.schema.json',
    title: 'fluksio pipeline (fluksio.yml)',
  };
}
