import { z } from 'zod';

/** An entry of `outs`, `metrics` or `plots`: a path, or `{path: {flags}}` (DVC's stage spec). */
const OutEntry = z.union([
  z.string().min(1, { error: 'expected a path' }),
  z
    .record(
      z.string().min(1),
      z.union([
        z.null(),
        z.looseObject({
          cache: z.boolean().optional(),
          persist: z.boolean().optional(),
          remote: z.string().optional(),
          push: z.boolean().optional(),
          desc: z.string().optional(),
        }),
      ]),
    )
    .refine((entry) => Object.keys(entry).length === 1, { error: 'expected one path with its flags' }),
]);
export type DvcOutEntry = z.infer<typeof OutEntry>;

/** The flags of a stage's plot file: an out's flags, and how DVC draws it (https://dvc.org/doc/user-guide/project-structure/dvcyaml-files#plots). */
const PlotFlags = z.looseObject({
  cache: z.boolean().optional(),
  persist: z.boolean().optional(),
  remote: z.string().optional(),
  push: z.boolean().optional(),
  desc: z.string().optional(),
  template: z.string().optional(),
  x: z.string({ error: 'expected a column name' }).min(1, { error: 'expected a column name' }).optional(),
  y: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
      error: 'expected a column name or a list of them',
    })
    .optional(),
  x_label: z.string().optional(),
  y_label: z.string().optional(),
  title: z.string().optional(),
  header: z.boolean().optional(),
});
export type DvcPlotFlags = z.infer<typeof PlotFlags>;

/** An entry of a stage's `plots`: a path, or `{path: flags}` (a list of flags draws the file several ways). */
const PlotEntry = z.union(
  [
    z.string().min(1, { error: 'expected a path' }),
    z
      .record(z.string().min(1), z.union([z.null(), PlotFlags, z.array(PlotFlags)]))
      .refine((entry) => Object.keys(entry).length === 1, { error: 'expected one path with its flags' }),
  ],
  { error: 'expected a path, or {path: flags}' },
);
export type DvcPlotEntry = z.infer<typeof PlotEntry>;

/**
 * A definition of the top-level `plots`: its id is a file or folder (x and y name
 * columns), or any name with y naming files (`{file.json: column}`; x a column, or
 * `{file.json: column}`).
 */
const PlotDefinition = z.looseObject({
  x: z
    .union([z.string().min(1), z.record(z.string().min(1), z.string().min(1))], {
      error: 'expected a column name, or {file: column}',
    })
    .optional(),
  y: z
    .union(
      [
        z.string().min(1),
        z.array(z.string().min(1)).min(1),
        z.record(z.string().min(1), z.union([z.string().min(1), z.array(z.string().min(1)).min(1)])),
      ],
      { error: 'expected a column name, a list of them, or {file: column or [columns]}' },
    )
    .optional(),
  template: z.string().optional(),
  title: z.string().optional(),
  x_label: z.string().optional(),
  y_label: z.string().optional(),
});
export type DvcPlotDefinition = z.infer<typeof PlotDefinition>;

/** The top-level `plots`: ids, each a path or `{id: definition}`. */
const TopLevelPlots = z.array(
  z.union(
    [
      z.string().min(1, { error: 'expected a path' }),
      z
        .record(z.string().min(1), z.union([z.null(), PlotDefinition]))
        .refine((entry) => Object.keys(entry).length === 1, {
          error: 'expected one plot id with its definition',
        }),
    ],
    { error: 'expected a path, or {plot id: definition}' },
  ),
);
export type DvcTopLevelPlots = z.infer<typeof TopLevelPlots>;

/** An entry of `params`: a key of params.yaml, or `{file: [keys]}` (null or [] for the whole file). */
const ParamsEntry = z.union([
  z.string().min(1, { error: 'expected a params key' }),
  z.record(z.string().min(1), z.union([z.null(), z.array(z.string().min(1))])),
]);
export type DvcParamsEntry = z.infer<typeof ParamsEntry>;

/** `vars`: files to load (`file.yaml` or `file.yaml:key,other`) and inline dictionaries. */
const VarsList = z.array(z.union([z.string().min(1), z.record(z.string(), z.unknown())]));

/** One stage of `dvc.yaml` after templating (DVC's stage entry, https://dvc.org/doc/user-guide/project-structure/dvcyaml-files). */
export const DvcStage = z.strictObject({
  cmd: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)], {
    error: 'expected a command or a list of commands',
  }),
  wdir: z.string().optional(),
  deps: z.array(z.string().min(1, { error: 'expected a path' })).default([]),
  params: z.array(ParamsEntry).default([]),
  outs: z.array(OutEntry).default([]),
  metrics: z.array(OutEntry).default([]),
  plots: z.array(PlotEntry).default([]),
  frozen: z.boolean().default(false),
  always_changed: z.boolean().default(false),
  desc: z.string().optional(),
  meta: z.unknown().optional(),
  vars: VarsList.optional(),
});
export type DvcStage = z.infer<typeof DvcStage>;

/** A stage as written, before foreach/matrix expansion and templating. */
export const DvcStageDefinition = z.record(z.string(), z.unknown());

/** The `dvc.yaml` file as a whole; stages are checked one by one after templating. */
export const DvcFile = z.looseObject({
  vars: VarsList.default([]),
  stages: z
    .record(
      z.string().regex(/^[^@:/\\]+$/, { error: 'expected a stage name without @ : / or \\' }),
      DvcStageDefinition,
    )
    .refine((stages) => Object.keys(stages).length > 0, { error: 'expected at least one stage' }),
  params: z.array(z.string()).optional(),
  metrics: z.array(z.string()).optional(),
  plots: TopLevelPlots.default([]),
  artifacts: z.unknown().optional(),
  datasets: z.unknown().optional(),
});
export type DvcFile = z.infer<typeof DvcFile>;
