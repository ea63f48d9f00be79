import type { ParamSpec } from '../../schemas/pipeline.js';

/**
 * One line per declared param, for a rejection reply or `--help`:
 * `lr (float, default 0.01, min 0)`.
 */
export function describeParams(specs: Readonly<Record<string, ParamSpec>>): string[] {
  return Object.entries(specs).map(([name, spec]) => {
    const facts: string[] = [spec.type];
    if (spec.default !== undefined) facts.push(`default ${JSON.stringify(spec.default)}`);
    else facts.push('required');
    if (spec.type === 'int' || spec.type === 'float') {
      if (spec.min !== undefined) facts.push(`min ${spec.min}`);
      if (spec.max !== undefined) facts.push(`max ${spec.max}`);
    }
    if (spec.enum) facts.push(`one of ${spec.enum.map((v) => JSON.stringify(v)).join(', ')}`);
    return `${name} (${facts.join(', ')})${spec.description ? `: ${spec.description}` : ''}`;
  });
}
