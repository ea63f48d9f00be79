import { posix } from 'node:path';
import { shellQuote } from '../pipeline/interpolate-command.js';
import { checkPipelineRules, type PipelineContext } from '../pipeline/pipeline-rules.js';
import type { ParamSpec, Pipeline, Stage } from '../../schemas/pipeline.js';
import { formatPath, type Problem } from '../problem.js';
import { DvcFile, DvcStage, type DvcOutEntry } from '../../schemas/dvc/dvc-file.js';
import type { PlotSpec } from '../../schemas/plot-spec.js';
import { canonicalJson } from '../canonical-json.js';
import { normalizePipelinePath } from '../pipeline/pipeline-paths.js';
import { deepestIssue } from './deepest-issue.js';
import { dvcStagePlot, stagePlotSpecs, topLevelPlotSpecs } from './dvc-plot-specs.js';
import {
  inexactParamProblem,
  paramLeaves,
  paramSpecOf,
  parseDvcParamsFile,
  type DvcParamsFile,
} from './dvc-params.js';
import { DvcTemplateError, resolveTemplate, type TemplateContext } from './dvc-template.js';
import { expandDvcStage, MAX_DVC_STAGES } from './expand-dvc-stages.js';
import { holdBackUnavailableStages, type LeftOutStage } from './hold-back-unavailable-stages.js';
import { loadDvcVars, type ProjectFileReader } from './load-dvc-vars.js';
import { projectFileProblem } from './project-file-problem.js';
import { DVC_YAML_OPTIONS } from './yaml-merge-keys.js';
import { parseYamlDocument } from '../text/parse-yaml-document.js';
import { yamlValue } from '../text/yaml-value.js';

/** The files a `dvc.yaml` reads, handed in by the caller that can look (no I/O here). */
export interface DvcSources extends PipelineContext {
  /** The text of `dvc.yaml`. */
  dvcYaml: string;
  /**
   * A file by its path relative to `dvc.yaml`'s folder (params.yaml, a vars file, and where
   * `exists` is given the `.dvc` file of a dep absent or imported), or undefined when there is none.
   */
  readFile(path: string): string | undefined;
}

export interface DvcTranslation {
  /** fluksio's pipeline for the project, or null when anything is wrong. */
  pipeline: Pipeline | null;
  /** Every problem at once, each with its field (`stages.train@small.cmd`) and, when known, its file. */
  problems: Problem[];
  /** What fluksio cannot honour, each naming its stage; the other stages still run. */
  notes: string[];
}

const DEFAULT_PARAMS = 'params.yaml';
const URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * Translates a DVC project's `dvc.yaml` (and its `params.yaml`) into fluksio's pipeline
 * model: templating and `foreach`/`matrix` resolved as DVC resolves them, params named as
 * DVC names them (`featurize.max_features`) and typed from the params file, `wdir` folded
 * into commands and paths. Stages fluksio cannot honour (remote outs, imports by URL,
 * frozen stages) are left out and named in `notes`, and so, where the workspace can be
 * looked at (`exists`), are the stages that need data absent from it which nothing here
 * makes (`dvc import`ed data, a frozen stage's outs); then the result passes the same
 * rules as a `fluksio.yml`.
 */
export function translateDvc(sources: DvcSources): DvcTranslation {
  const problems: Problem[] = [];
  const notes: string[] = [];
  const document = parseYamlDocument(sources.dvcYaml, DVC_YAML_OPTIONS);
  if (document.errors.length > 0) {
    const message = `YAML syntax error: ${document.errors[0]?.message.split('\n')[0] ?? ''}`;
    return { pipeline: null, problems: [{ path: '', message }], notes };
  }
  const read = yamlValue(document);
  if ('problem' in read) return { pipeline: null, problems: [{ path: '', message: read.problem }], notes };
  const file = DvcFile.safeParse(read.value);
  if (!file.success) {
    const fileProblems = file.error.issues.map(deepestIssue).map((issue) => ({
      path: formatPath(issue.path),
      message: issue.message.replace(/^Invalid input: /, ''),
    }));
    return { pipeline: null, problems: fileProblems, notes };
  }

  // A file outside the repository is refused with a problem (null), never read.
  const readFile: ProjectFileReader = (name, at) => {
    const refused = projectFileProblem(name, sources.pipelineDir);
    if (refused === null) return sources.readFile(name);
    problems.push({ path: at, message: refused });
    return null;
  };
  const paramFiles = new Map<string, DvcParamsFile | null>();
  const paramsFile = (name: string, at: string): DvcParamsFile | null => {
    if (!paramFiles.has(name)) {
      const text = readFile(name, at);
      let parsed: DvcParamsFile | null = null;
      if (text === null) {
        // Refused, and said why.
      } else if (text === undefined) {
        if (name !== DEFAULT_PARAMS) problems.push({ path: at, message: `${name} does not exist` });
      } else if (!/\.(ya?ml|json)$/i.test(name)) {
        problems.push({
          path: at,
          message: `${name}: only YAML and JSON params files are read (not TOML or Python)`,
        });
      } else {
        try {
          parsed = parseDvcParamsFile(text);
        } catch (error) {
          problems.push({ path: at, message: `${name}: ${(error as Error).message}` });
        }
      }
      paramFiles.set(name, parsed);
    }
    return paramFiles.get(name) ?? null;
  };
  const defaults = paramsFile(DEFAULT_PARAMS, DEFAULT_PARAMS);
  const base: TemplateContext = { data: defaults?.data ?? {}, params: defaults?.data ?? {} };
  const global = loadDvcVars(file.data.vars, base, 'vars', readFile, problems);

  const stages: Record<string, Stage> = {};
  const leftOut = new Map<string, LeftOutStage>();
  const used = new Map<string, { value: unknown; isFloat: boolean }>();
  let stagesLeft = MAX_DVC_STAGES;
  for (const [name, definition] of Object.entries(file.data.stages)) {
    let expanded;
    try {
      if (stagesLeft === 0) {
        throw new DvcTemplateError(
          `a dvc.yaml makes at most ${MAX_DVC_STAGES.toLocaleString('en-US')} stages`,
        );
      }
      expanded = expandDvcStage(name, definition, global, stagesLeft);
      stagesLeft -= expanded.length;
    } catch (error) {
      if (!(error instanceof DvcTemplateError)) throw error;
      problems.push({ path: `stages.${name}`, message: error.message });
      continue;
    }
    for (const { name: stageName, body, loop } of expanded) {
      const at = `stages.${stageName}`;
      const { vars, ...fields } = body;
      if (vars !== undefined && !Array.isArray(vars)) {
        problems.push({ path: `${at}.vars`, message: 'expected a list of files and dictionaries' });
      }
      const withVars = loadDvcVars(Array.isArray(vars) ? vars : [], global, `${at}.vars`, readFile, problems);
      const context: TemplateContext = { data: { ...withVars.data, ...loop }, params: withVars.params };
      const resolved: Record<string, unknown> = {};
      const cmdParams: string[] = [];
      for (const [field, value] of Object.entries(fields)) {
        try {
          const result = resolveTemplate(value, context, field === 'cmd');
          resolved[field] = result.value;
          cmdParams.push(...result.params);
        } catch (error) {
          if (!(error instanceof DvcTemplateError)) throw error;
          problems.push({ path: `${at}.${field}`, message: error.message });
        }
      }
      const stage = DvcStage.safeParse(resolved);
      if (!stage.success) {
        for (const issue of stage.error.issues.map(deepestIssue)) {
          const message =
            issue.code === 'unrecognized_keys'
              ? `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`
              : issue.message.replace(/^Invalid input: /, '');
          problems.push({ path: formatPath(['stages', stageName, ...issue.path]), message });
        }
        continue;
      }
      const dvc = stage.data;
      const wdir = posix.normalize(dvc.wdir ?? '.');
      const inWdir = (path: string) => posix.normalize(posix.join(wdir, path));
      const outs = dvc.outs.map(outOf);
      const metrics = dvc.metrics.map(outOf);
      const stagePlots = dvc.plots.map(dvcStagePlot);
      const plots: OutPath[] = stagePlots.map(({ path, flags }) => ({
        path,
        persist: flags.some((each) => each.persist === true),
        remote: flags.find((each) => each.remote !== undefined)?.remote,
      }));
      // What a stage left out would have made, for naming it to the stages that need it.
      const localOuts = [...outs, ...metrics, ...plots]
        .map((out) => out.path)
        .filter((path) => !URL.test(path))
        .map(inWdir);
      if (dvc.frozen) {
        notes.push(`stage ${stageName}: frozen, so it does not run; its outs are read from the workspace`);
        leftOut.set(stageName, { outs: localOuts, why: 'frozen' });
        continue;
      }
      const remote = [
        ...dvc.deps.filter((dep) => URL.test(dep)),
        ...[...outs, ...metrics, ...plots].filter((out) => URL.test(out.path)).map((out) => out.path),
      ];
      if (remote.length > 0) {
        notes.push(
          `stage ${stageName}: cannot be honoured (${remote.join(', ')} is not a path in this repository: remote outs and imports are not supported); it does not run`,
        );
        leftOut.set(stageName, { outs: localOuts, why: 'not-honoured' });
        continue;
      }
      for (const out of [...outs, ...metrics, ...plots]) {
        if (out.remote)
          notes.push(
            `stage ${stageName}: ${out.path} names remote "${out.remote}"; fluksio keeps outs in its own store`,
          );
      }
      const persisted = [...outs, ...metrics, ...plots].filter((out) => out.persist).map((out) => out.path);
      if (persisted.length > 0) {
        notes.push(
          `stage ${stageName}: ${persisted.join(', ')} persist between runs, so the stage is never taken from the cache`,
        );
      }

      const params = new Set(cmdParams);
      dvc.params.forEach((entry, index) => {
        const entries =
          typeof entry === 'string' ? [[DEFAULT_PARAMS, [entry]] as const] : Object.entries(entry);
        for (const [named, keys] of entries) {
          // As DVC reads them: relative to the stage's wdir (`${…}` reads the params.yaml
          // beside dvc.yaml, whatever the wdir). An absolute path stays one, to be refused:
          // joined to the wdir it would name a file in the repository instead.
          const fileName = posix.isAbsolute(named) ? named : inWdir(named);
          const source = paramsFile(fileName, `${at}.params[${index}]`);
          if (!source) {
            if (fileName === DEFAULT_PARAMS)
              problems.push({ path: `${at}.params[${index}]`, message: `${DEFAULT_PARAMS} does not exist` });
            else if (named === DEFAULT_PARAMS)
              problems.push({ path: `${at}.params[${index}]`, message: `${fileName} does not exist` });
            continue;
          }
          const prefix = fileName === DEFAULT_PARAMS ? '' : `${fileName}:`;
          const selected = keys === null || keys.length === 0 ? [null] : keys;
          for (const key of selected) {
            let leaves: [string, unknown][];
            try {
              leaves = key === null ? paramLeaves(source.data, []) : leavesAt(source.data, key);
            } catch {
              problems.push({ path: `${at}.params[${index}]`, message: `"${key}" is not in ${fileName}` });
              continue;
            }
            for (const [leaf, value] of leaves) {
              const inexact = inexactParamProblem(source, leaf, fileName);
              if (inexact) problems.push({ path: `${at}.params[${index}]`, message: inexact });
              params.add(prefix + leaf);
              used.set(prefix + leaf, { value, isFloat: source.floats.has(leaf) });
            }
          }
        }
      });
      for (const name of cmdParams) {
        const inexact = defaults && inexactParamProblem(defaults, name, DEFAULT_PARAMS);
        if (inexact) problems.push({ path: `${at}.cmd`, message: inexact });
        if (!used.has(name))
          used.set(name, {
            value: leafValue(base.params, name),
            isFloat: defaults?.floats.has(name) ?? false,
          });
      }

      const commands = Array.isArray(dvc.cmd) ? dvc.cmd : [dvc.cmd];
      const cmd = commands.join(' && ');
      stages[stageName] = {
        // Grouped, so every command of it runs in wdir or none does (`a; b` included).
        cmd: wdir === '.' ? cmd : `cd ${shellQuote(wdir)} && { ${cmd}; }`,
        deps: dvc.deps.map(inWdir),
        params: [...params],
        outs: [...outs, ...plots].map((out) => inWdir(out.path)),
        metrics: metrics.map((out) => inWdir(out.path)),
        cache: !dvc.always_changed && persisted.length === 0,
        ...(dvc.desc === undefined ? {} : { description: dvc.desc }),
      };
      addPlots(
        stages[stageName],
        stagePlots.flatMap(({ path, flags }) => stagePlotSpecs(inWdir(path), flags)),
      );
    }
  }
  // Where the workspace can be looked at (not through an API), stages whose data is absent
  // and cannot be made here are named and left out, so the rest still runs.
  const heldBack = sources.exists
    ? holdBackUnavailableStages({
        stages,
        leftOut,
        files: { pipelineDir: sources.pipelineDir, exists: sources.exists, readFile: sources.readFile },
      })
    : { held: [], notes: [] };
  notes.push(...heldBack.notes);
  const runnable = Object.fromEntries(
    Object.entries(stages).filter(([name]) => !heldBack.held.includes(name)),
  );
  const outsOf = new Map(
    Object.entries(runnable).map(([name, stage]) => [
      name,
      [...stage.outs, ...stage.metrics].map(normalizePipelinePath),
    ]),
  );
  const topLevel = topLevelPlotSpecs(file.data.plots, outsOf);
  notes.push(...topLevel.notes);
  for (const [name, specs] of topLevel.byStage) addPlots(runnable[name]!, specs);
  if (problems.length > 0) return { pipeline: null, problems, notes };
  if (Object.keys(runnable).length === 0) {
    const why = notes.length > 0 ? `: ${notes.join('; ')}` : '';
    return { pipeline: null, problems: [{ path: 'stages', message: `no stage can run here${why}` }], notes };
  }
  // A param reaches its stage in the command (`${name}`, filled in at run time), as a
  // FLUKSIO_PARAM_* variable, and in its params file, which the stage finds holding the
  // run's values while it runs (`dvc_params`): any value is honoured, not only the file's.
  const listed = new Set(Object.values(runnable).flatMap((stage) => stage.params));
  const paramSpecs: Record<string, ParamSpec> = {};
  for (const [name, { value, isFloat }] of [...used].sort(([a], [b]) => a.localeCompare(b))) {
    // A param only stages held back read is not one of this pipeline's.
    if (listed.has(name)) paramSpecs[name] = paramSpecOf(value, isFloat);
  }
  const pipeline: Pipeline = {
    version: 1,
    params: paramSpecs,
    'runs-on': [],
    on: {},
    env: [],
    timeout: 24 * 3_600_000,
    retries: 0,
    metrics: {},
    stages: runnable,
    dvc_params: true,
  };
  const ruleProblems = checkPipelineRules(pipeline, sources);
  return ruleProblems.length > 0
    ? { pipeline: null, problems: ruleProblems, notes }
    : { pipeline, problems: [], notes };
}

/** Gives a stage plot specs it does not have yet (a file drawn alike in its stage and at the top level is read once). */
function addPlots(stage: Stage, specs: readonly PlotSpec[]): void {
  const plots = [...(stage.plots ?? [])];
  const held = new Set(plots.map(canonicalJson));
  for (const spec of specs) {
    if (!held.has(canonicalJson(spec))) plots.push(spec);
    held.add(canonicalJson(spec));
  }
  if (plots.length > 0) stage.plots = plots;
}

interface OutPath {
  path: string;
  persist: boolean;
  remote: string | undefined;
}

function outOf(entry: DvcOutEntry): OutPath {
  if (typeof entry === 'string') return { path: entry, persist: false, remote: undefined };
  const [path, flags] = Object.entries(entry)[0] ?? ['', null];
  return { path, persist: flags?.persist ?? false, remote: flags?.remote };
}

function leavesAt(data: Record<string, unknown>, key: string): [string, unknown][] {
  const path = key.split('.');
  return paramLeaves(leafValue(data, key, true), path);
}

function leafValue(data: Record<string, unknown>, name: string, strict = false): unknown {
  let node: unknown = data;
  for (const part of name.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) {
      if (strict) throw new Error(`${name} is not defined`);
      return undefined;
    }
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}
