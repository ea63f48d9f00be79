// Regenerates schemas/fluksio.schema.json from the zod schema (`npm run schema:json`).
import { writeFileSync } from 'node:fs';
import { pipelineJsonSchema } from '../schemas/pipeline-json-schema.js';

const target = new URL('../schemas/fluksio.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(pipelineJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
