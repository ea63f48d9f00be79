import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { pipelineJsonSchema } from '../../schemas/pipeline-json-schema.js';

test('the committed JSON Schema is the one generated from the zod schema (npm run schema:json)', () => {
  const committed = JSON.parse(
    readFileSync(new URL('../../schemas/fluksio.schema.json', import.meta.url), 'utf8'),
  );
  expect(committed).toEqual(pipelineJsonSchema());
});
