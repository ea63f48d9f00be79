// Moves product files into the folders of the README's code map (issue 10, "flat
// corridors") and rewrites every relative import of them, in product code, tests,
// benchmarks and scripts. Driven by RULES, a table of glob → folder.
//
// Idempotent, so it can be run again after merging a branch that still adds files in the
// old flat folders: a rule's glob names files directly in an old folder, so a moved file
// never matches again; a file matching no rule stays where it is. A relative import that
// points at nothing (a merged file importing `store/find-run.js`, which now lives in
// `store/runs/`) is sent where the rules put its target, when that file exists there.
//
// A dangling import that no rule explains is sent to the one product file of its name, if
// there is exactly one (so a file moved by hand needs no import fixed by hand).
//
//   node scripts/regroup.mjs            move and rewrite, then format the changed files
//   node scripts/regroup.mjs --check    change nothing; exit 1 when anything would change, or
//                                       a file sits at store/'s top where no rule places it
//   node scripts/regroup.mjs --root DIR work on another checkout (the tests use a scratch tree)
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, rmdir, writeFile } from 'node:fs/promises';
import { dirname, extname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import picomatch from 'picomatch';

/**
 * Where files go: the first rule whose glob matches a file's path (relative to the root,
 * `/`-separated) moves it into `to`, under its own name. Globs name files directly in an
 * old folder (never `**`), which is what makes a second run a no-op.
 */
export const RULES = [
  // store/: one folder per aggregate, the database plumbing in store/db/.
  {
    to: 'store/db',
    globs: [
      'store/{database,migrate-database,migrations-digest,open-local-database,local-database-damaged-error}.ts',
      'store/{escape-like,excluded,milliseconds}.ts',
    ],
  },
  { to: 'core/text', globs: ['store/format-time-limit.ts'] },
  { to: 'store/tokens', globs: ['store/*api-token*.ts'] },
  {
    to: 'store/leases',
    globs: [
      'store/{claim-next-run,heartbeat-run,sweep-runs,runner-may-take,record-waiting-reasons,requeued-now,release-limit}.ts',
      'store/*-leased-run.ts',
    ],
  },
  {
    to: 'store/runners',
    globs: ['store/*-runner.ts', 'store/*-runners.ts', 'store/runner-*.ts', 'store/*-runner-*.ts'],
  },
  { to: 'store/deliveries', globs: ['store/*deliver*.ts'] },
  { to: 'store/installations', globs: ['store/*installation*.ts'] },
  { to: 'store/cache', globs: ['store/*cache*.ts', 'store/previous-stage-inputs.ts'] },
  { to: 'store/blobs', globs: ['store/*blob*.ts', 'store/gc-store.ts'] },
  {
    to: 'store/events',
    globs: ['store/apply-*.ts', 'store/journal-of-run.ts'],
  },
  {
    to: 'store/outbox',
    globs: [
      'store/*outbox*.ts',
      'store/*github-*.ts',
      'store/*group-comment*.ts',
      'store/*notice*.ts',
      'store/{bump-drifted-checks,bump-render-version,record-check-run-progress}.ts',
    ],
  },
  {
    to: 'store/runs',
    globs: [
      'store/*run*.ts',
      'store/{find-baseline,get-stage-log,finished-now,control-plane-gauges,request-cancel,to-stage-record}.ts',
    ],
  },

  // Pure shared logic out of schemas/ (which keeps zod schemas, protocol shapes and tables).
  {
    to: 'core/pipeline',
    globs: [
      'schemas/{validate-pipeline,pipeline-rules,pipeline-paths,stage-graph}.ts',
      'schemas/{placeholder-contexts,interpolate-command,param-variables}.ts',
    ],
  },
  {
    to: 'core/params',
    globs: ['schemas/{param-assignments,resolve-params,describe-params,comment-command}.ts'],
  },
  { to: 'core/text', globs: ['schemas/{format,sparkline,storable-text}.ts'] },
  // dvc.yaml read as a pipeline: the zod shapes stay in schemas/dvc/, the translation is logic.
  {
    to: 'core/dvc',
    globs: ['schemas/dvc/{dvc-params,dvc-template,expand-dvc-stages,load-dvc-vars,translate-dvc}.ts'],
  },
  {
    to: 'core',
    globs: ['schemas/{canonical-json,manifest-key,check-run-conclusion,traceback,problem}.ts'],
  },

  // app/github/: a folder per subsystem; what all of them use stays at app/github/.
  {
    to: 'app/github/intake',
    globs: [
      'app/github/*deliver*.ts',
      'app/github/{webhook-intake,accept-delivery,unreadable-payload-error}.ts',
    ],
  },
  { to: 'app/github/outbox', globs: ['app/github/outbox*.ts', 'app/github/sync-*.ts'] },
  {
    to: 'app/github/render',
    globs: ['app/github/render-*.ts', 'app/github/{markdown,check-run-name}.ts'],
  },
  {
    to: 'app/github/triggers',
    globs: [
      'app/github/{run,queue,rerun,cancel,answer}-*.ts',
      'app/github/{branch-selected,comment-thread,default-grid,is-fork,may-write,raise-notice}.ts',
      'app/github/read-{pipeline-at,pull-request}.ts',
    ],
  },

  // runner/: the engine's parts; run-pipeline, execute-stage, verify-stage and ports stay.
  {
    to: 'runner/workspace',
    globs: [
      'runner/git-*.ts',
      'runner/{changed-paths,first-parent-commits,find-repo-root,not-a-git-repository-error,never-code}.ts',
      'runner/{scratch-checkout,work-tree-listing,workspace,workspace-path,check-workspace-paths}.ts',
      'runner/unsafe-path-error.ts',
    ],
  },
  {
    to: 'runner/keys',
    globs: [
      'runner/{cache-key,compute-stamp,content-digest,code-digest,code-index,code-view,stat-cache}.ts',
      'runner/{fingerprint,interpreter-digests,command-interpreters,stage-key-inputs,keying-notes}.ts',
      'runner/{rerun-reasons,why-not-python,recheck-stage-inputs,compare-with-entry}.ts',
      'runner/read-set-probe.ts',
      'runner/read-trace*.ts',
    ],
  },
  {
    to: 'runner/blobs',
    globs: ['runner/*blob*.ts', 'runner/{stage-outputs,missing-out-error}.ts'],
  },
  {
    to: 'runner/sandbox',
    globs: [
      'runner/{bubblewrap-launcher,detect-bubblewrap,chown-tree,descendant-pids,private-dir}.ts',
      'runner/*user-process*.ts',
      'runner/stage-{launcher,process,user-launcher,user,environment}.ts',
    ],
  },
  {
    to: 'runner/output',
    globs: [
      'runner/{batching-event-sink,line-splitter,log-tail,masker,metrics-file,workflow-command,stage-output}.ts',
    ],
  },

  // test/: tests mirror the product where a folder moved whole; the rest stay by behaviour.
  {
    to: 'test/core',
    globs: [
      'test/schemas/{interpolate-command,params,placeholder-contexts,traceback,validate-pipeline}.test.ts',
    ],
  },
];

/** The folders of the product (what rules move and dangling imports are matched against). */
const PRODUCT = [
  'schemas',
  'core',
  'present',
  'client',
  'host',
  'store',
  'runner',
  'local',
  'app',
  'cli',
  'action',
  'pages',
];
/** The folders whose source files may import a moved file. */
const SCANNED = [...PRODUCT, 'bench', 'scripts', 'bin', 'test'];
const SCANNED_FILES = ['vitest.config.ts', 'drizzle.config.ts', 'eslint.config.js'];
/** A file starting with this comment keeps its relative strings (they are not its imports). */
const IGNORE_MARK = '// regroup-ignore-file';
const SOURCE = /\.(?:[cm]?[jt]s)$/;
/** A quoted relative path: an import, an export, `import()`, or `new URL(…, import.meta.url)`. */
const RELATIVE = /(['"])(\.\.?\/[^'"\n]*)\1/g;

const toPosix = (path) => path.split(sep).join('/');
const isFile = (path) => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;

/** Every source file under the scanned folders, as root-relative `/` paths. */
async function listSources(root) {
  const found = [];
  async function walk(dir) {
    let entries;
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true });
    } catch (error) {
      if (error.code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') await walk(path);
      } else if (SOURCE.test(entry.name)) {
        found.push(path);
      }
    }
  }
  for (const dir of SCANNED) await walk(dir);
  for (const file of SCANNED_FILES) if (existsSync(join(root, file))) found.push(file);
  return found.sort();
}

/** Where the rules put `path` (root-relative), or null when no rule matches it. */
export function destinationOf(path, rules = RULES) {
  for (const rule of rules) {
    if (rule.globs.some((glob) => picomatch(glob)(path))) return posix.join(rule.to, posix.basename(path));
  }
  return null;
}

/**
 * The paths a relative specifier of `fromFile` may name, each with how it was written:
 * `exact`, `js-for-ts` (`./x.js` for x.ts, as NodeNext wants), `bare` (`./x`), `index`.
 */
function candidatesOf(fromFile, specifier) {
  const base = posix.normalize(posix.join(posix.dirname(fromFile), specifier));
  const candidates = [[base, 'exact']];
  if (/\.[cm]?js$/.test(base)) candidates.push([base.replace(/\.([cm]?)js$/, '.$1ts'), 'js-for-ts']);
  if (!extname(base)) candidates.push([`${base}.ts`, 'bare'], [`${base}/index.ts`, 'index']);
  return candidates;
}

/** The specifier that names `target` from `fromFile`, written in `form` (see candidatesOf). */
function specifierFor(fromFile, target, form) {
  let path = posix.relative(posix.dirname(fromFile), target);
  if (form === 'js-for-ts') path = path.replace(/\.([cm]?)ts$/, '.$1js');
  if (form === 'bare') path = path.replace(/\.ts$/, '');
  if (form === 'index') path = path.replace(/\/index\.ts$/, '');
  return path.startsWith('.') ? path : `./${path}`;
}

/**
 * What a run would do in `root`: the moves (old → new path) and each changed file's new
 * text (by its path after the moves). Nothing is written.
 */
export async function planRegroup(root, rules = RULES) {
  const files = await listSources(root);
  const before = new Set(files);
  const moves = new Map();
  for (const file of files) {
    const to = destinationOf(file, rules);
    if (to && to !== file) {
      if (before.has(to) || [...moves.values()].includes(to))
        throw new Error(`${file}: ${to} exists already`);
      moves.set(file, to);
    }
  }
  const after = new Set(files.map((file) => moves.get(file) ?? file));
  const newPath = (path) => moves.get(path) ?? path;
  const uniqueByName = new Map();
  for (const path of after) {
    if (!PRODUCT.some((dir) => path.startsWith(`${dir}/`))) continue;
    const name = posix.basename(path);
    uniqueByName.set(name, uniqueByName.has(name) ? null : path);
  }

  const rewrites = new Map();
  for (const file of files) {
    const text = await readFile(join(root, file), 'utf8');
    if (text.startsWith(IGNORE_MARK)) continue;
    const at = newPath(file);
    const rewritten = text.replace(RELATIVE, (whole, quote, specifier) => {
      // Sources by the listing (they may be moving); anything else (JSON, fixtures) on disk.
      // Only files count: a string like '../' names a folder, and stays as it is.
      const exists = (path) => before.has(path) || (!SOURCE.test(path) && isFile(join(root, path)));
      const candidates = candidatesOf(file, specifier);
      const resolved = candidates.find(([path]) => exists(path));
      let target;
      let form;
      if (resolved) {
        target = newPath(resolved[0]);
        form = resolved[1];
      } else {
        // A dangling import: where the rules put what it names, if that file exists; else
        // the one product file of that name (files are named after their one export).
        // Only a specifier naming a source file counts (`./x.js`, `./x`): text such as
        // '../x' in a test's data, or a folder, names no module.
        for (const [candidate, candidateForm] of candidates) {
          if (candidateForm === 'index' || !SOURCE.test(candidate)) continue;
          const byName = candidateForm === 'bare' ? null : uniqueByName.get(posix.basename(candidate));
          const moved = destinationOf(candidate, rules) ?? byName;
          if (moved && after.has(moved)) {
            target = moved;
            form = candidateForm;
            break;
          }
        }
        if (!target) return whole;
      }
      if (form === 'exact' && target === resolved?.[0] && at === file) return whole;
      const next = specifierFor(at, target, form);
      return next === specifier ? whole : `${quote}${next}${quote}`;
    });
    if (rewritten !== text) rewrites.set(at, rewritten);
  }
  return { moves, rewrites, unplaced: unplacedFiles(files, moves) };
}

/** Folders that keep no file of their own once grouped: a file left there needs a rule. */
const GROUPED = new Set(['store']);

/** Files left directly in a GROUPED folder, which no rule places. */
function unplacedFiles(files, moves) {
  return files.filter((file) => !moves.has(file) && GROUPED.has(posix.dirname(file)));
}

/** Carries out a plan: moves the files, writes the rewritten ones, formats them. */
export async function applyRegroup(root, plan, { format = true } = {}) {
  for (const [from, to] of plan.moves) {
    await mkdir(dirname(join(root, to)), { recursive: true });
    await rename(join(root, from), join(root, to));
  }
  for (const [path, text] of plan.rewrites) await writeFile(join(root, path), text);
  // Emptied folders go (git keeps no empty folder; the file system should not either).
  for (const from of new Set([...plan.moves.keys()].map((path) => dirname(join(root, path))))) {
    try {
      await rmdir(from);
    } catch (error) {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'ENOENT' && error.code !== 'EEXIST') throw error;
    }
  }
  if (format) {
    // A rewritten import can cross the print width: format as `npm run lint` checks.
    const prettier = await import('prettier');
    const changed = new Set([...plan.rewrites.keys(), ...plan.moves.values()]);
    for (const path of changed) {
      const file = join(root, path);
      const options = (await prettier.resolveConfig(file)) ?? {};
      const text = await readFile(file, 'utf8');
      const formatted = await prettier.format(text, { ...options, filepath: file });
      if (formatted !== text) await writeFile(file, formatted);
    }
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      check: { type: 'boolean', default: false },
      root: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(
      'Usage: node scripts/regroup.mjs [--check] [--root DIR]\n\n' +
        'Moves files into the folders of the README code map and rewrites their imports.\n' +
        '  --check     change nothing; exit 1 when a file would move or an import change,\n' +
        '              or a file sits at the top of store/ where no rule places it\n' +
        '  --root DIR  the checkout to work on (default: this repository)',
    );
    return;
  }
  const root = values.root ?? fileURLToPath(new URL('..', import.meta.url));
  const plan = await planRegroup(root);
  for (const [from, to] of plan.moves) console.log(`move ${from} -> ${to}`);
  for (const path of plan.rewrites.keys())
    if (![...plan.moves.values()].includes(path)) console.log(`imports ${path}`);
  for (const path of plan.unplaced)
    console.warn(`no rule places ${path}: add one to RULES in scripts/regroup.mjs`);
  if (values.check) {
    if (plan.moves.size > 0 || plan.rewrites.size > 0) {
      console.error(
        `${toPosix(relative(process.cwd(), root)) || '.'}: ${plan.moves.size} file(s) to move, ` +
          `${plan.rewrites.size} to rewrite: run node scripts/regroup.mjs`,
      );
      process.exitCode = 1;
    }
    // A file no rule places would stay in a folder that keeps none: the layout needs a rule.
    if (plan.unplaced.length > 0) process.exitCode = 1;
    return;
  }
  await applyRegroup(root, plan);
  console.log(`${plan.moves.size} moved, ${plan.rewrites.size} rewritten`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
