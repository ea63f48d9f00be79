import { interpolatedNames } from './interpolate-command.js';
import { paramVariableName } from './param-variables.js';
import { placeholderContexts } from './placeholder-contexts.js';
import type { Pipeline, ParamSpec } from '../../schemas/pipeline.js';
import { DeclaredOuts } from './declared-outs.js';
import { normalizePipelinePath, repoPathOf } from './pipeline-paths.js';
import type { Problem } from '../problem.js';
import { reservedComponentOf } from '../../schemas/reserved-path.js';
import { buildStageGraph, findCycle } from './stage-graph.js';

/** What the rules need to know about where the pipeline lives. */
export interface PipelineContext {
  /** The pipeline file's directory relative to the repository root; '' at the root. */
  pipelineDir: string;
  /**
   * Whether a repository-relative path exists (a file or a directory). Given by the
   * caller that can look: the working tree locally, the commit's tree on the server.
   * Without it, deps are not checked for existence.
   */
  exists?: (repoPath: string) => boolean;
}

/**
 * The rules of DESIGN §3 that the schema alone cannot express, over a pipeline that
 * already matches the schema. Returns every problem found.
 */
export function checkPipelineRules(pipeline: Pipeline, context: PipelineContext): Problem[] {
  const problems: Problem[] = [];
  const declared = Object.keys(pipeline.params);
  const declaredList = declared.length > 0 ? declared.join(', ') : 'none';

  const variables = new Map<string, string>();
  for (const [name, spec] of Object.entries(pipeline.params)) {
    problems.push(...checkParamSpec(`params.${name}`, spec));
    const variable = paramVariableName(name);
    const clash = variables.get(variable);
    if (clash !== undefined) {
      problems.push({
        path: `params.${name}`,
        message: `"${name}" and "${clash}" would both reach stages as ${variable}; param names must differ beyond upper and lower case`,
      });
    }
    variables.set(variable, name);
  }
  pipeline.env.forEach((name, index) => {
    // fluksio's own variables (a runner's token among them) never reach a stage or a key.
    if (/^FLUKSIO_/i.test(name)) {
      problems.push({
        path: `env[${index}]`,
        message: `"${name}" is reserved: FLUKSIO_* variables never pass to stages`,
      });
    }
  });

  const declaredOuts = new DeclaredOuts();
  for (const [stageName, stage] of Object.entries(pipeline.stages)) {
    const at = `stages.${stageName}`;
    stage.params.forEach((param, index) => {
      if (!(param in pipeline.params)) {
        problems.push({
          path: `${at}.params[${index}]`,
          message: `unknown param "${param}"; the pipeline declares: ${declaredList}`,
        });
      }
    });
    for (const name of new Set(interpolatedNames(stage.cmd))) {
      if (!(name in pipeline.params)) {
        problems.push({
          path: `${at}.cmd`,
          message: `\${${name}} is not a declared param; the pipeline declares: ${declaredList}`,
        });
      } else if (!stage.params.includes(name)) {
        problems.push({
          path: `${at}.cmd`,
          message: `\${${name}} is used but not listed in ${at}.params (a stage may only interpolate params it lists, so they enter its cache key)`,
        });
      }
    }
    for (const placeholder of placeholderContexts(stage.cmd)) {
      if (typeof placeholder.context === 'string') continue;
      problems.push({
        path: `${at}.cmd`,
        message: `\${${placeholder.name}} is inside ${placeholder.context.unsafe}, where its value could run as shell code; write it as a plain word or inside "…" or '…' at the top level of the command (fluksio quotes the value for you, e.g. echo "${placeholder.name}=\${${placeholder.name}}"), or read "$${paramVariableName(placeholder.name)}" there instead`,
      });
    }
    for (const field of ['deps', 'outs', 'metrics'] as const) {
      stage[field].forEach((path, index) => {
        const repoPath = repoPathOf(context.pipelineDir, path);
        if (repoPath === null) {
          problems.push({
            path: `${at}.${field}[${index}]`,
            message: `"${path}" is outside the repository; paths stay inside it`,
          });
          return;
        }
        if (field === 'deps') return;
        const reserved = reservedComponentOf(repoPath) ?? reservedComponentOf(path);
        if (repoPath === '.' || reserved !== null) {
          problems.push({
            path: `${at}.${field}[${index}]`,
            message: `"${path}" cannot be an output: it is ${reserved === null ? 'the repository itself' : `inside ${reserved}/`}`,
          });
          return;
        }
        const normalized = normalizePipelinePath(path);
        // One problem an out, whatever it overlaps: nested outs by the thousand must not
        // make a problem for each pair.
        const overlap = declaredOuts.overlap(normalized);
        if (overlap) {
          const more = overlap.count > 1 ? ` (and ${overlap.count - 1} more outs)` : '';
          problems.push({
            path: `${at}.${field}[${index}]`,
            message:
              overlap.path === normalized
                ? `"${path}" is already an output of stage ${overlap.stage}; two stages may not declare the same out${more}`
                : `"${path}" overlaps "${overlap.path}", an output of stage ${overlap.stage}${more}`,
          });
        }
        declaredOuts.add(normalized, stageName);
      });
    }
    // A plot is read from what the stage wrote, and kept (and restored) as one of its outs.
    const written = new DeclaredOuts();
    for (const out of [...stage.outs, ...stage.metrics]) written.add(normalizePipelinePath(out), stageName);
    stage.plots?.forEach((plot, index) => {
      const normalized = normalizePipelinePath(plot.path);
      if (!written.holds(normalized)) {
        problems.push({
          path: `${at}.plots[${index}].path`,
          message: `"${plot.path}" is not an out of this stage; list it (or a folder holding it) in outs`,
        });
      }
    });
  }

  for (const [stageName, stage] of Object.entries(pipeline.stages)) {
    stage.deps.forEach((dep, index) => {
      const repoPath = repoPathOf(context.pipelineDir, dep);
      if (repoPath === null || !context.exists) return;
      const normalized = normalizePipelinePath(dep);
      if (declaredOuts.overlap(normalized) === null && !context.exists(repoPath)) {
        problems.push({
          path: `stages.${stageName}.deps[${index}]`,
          message: `"${dep}" is neither in the repository nor an output of any stage`,
        });
      }
    });
  }

  const cycle = findCycle(buildStageGraph(pipeline));
  if (cycle) {
    problems.push({
      path: `stages.${cycle[0]}`,
      message: `the stages form a cycle: ${cycle.join(' → ')} (each lists an output of the next among its deps)`,
    });
  }
  return problems;
}

/** A param's own declaration must be consistent: bounds in order, default allowed. */
function checkParamSpec(at: string, spec: ParamSpec): Problem[] {
  const problems: Problem[] = [];
  if ((spec.type === 'float' || spec.type === 'int') && spec.min !== undefined && spec.max !== undefined) {
    if (spec.min > spec.max)
      problems.push({ path: `${at}.min`, message: `min ${spec.min} is above max ${spec.max}` });
  }
  if (spec.default === undefined) return problems;
  if (spec.type === 'float' || spec.type === 'int') {
    if (spec.min !== undefined && spec.default < spec.min) {
      problems.push({ path: `${at}.default`, message: `${spec.default} is below min ${spec.min}` });
    }
    if (spec.max !== undefined && spec.default > spec.max) {
      problems.push({ path: `${at}.default`, message: `${spec.default} is above max ${spec.max}` });
    }
  }
  if ((spec.type === 'float' || spec.type === 'int' || spec.type === 'string') && spec.enum) {
    if (!(spec.enum as readonly (number | string)[]).includes(spec.default)) {
      problems.push({
        path: `${at}.default`,
        message: `${JSON.stringify(spec.default)} is not one of ${spec.enum.map((v) => JSON.stringify(v)).join(', ')}`,
      });
    }
  }
  return problems;
}
