import { Command, CommanderError, Option } from 'commander';
import { constants } from 'node:os';
import { LockWaitInterruptedError } from '../host/lock-wait-interrupted-error.js';
import { processIo, type CliIo } from '../present/terminal/cli-io.js';
import { UsageError, type UsageProblem } from '../present/terminal/usage-error.js';
import { asksForJson, jsonErrorLine } from './json-error.js';
import { listenForInterrupts } from './process-interrupts.js';
import { addServerCommands } from './server-commands.js';
import { FLUKSIO_VERSION } from '../core/fluksio-version.js';
import { messageOf } from '../core/text/message-of.js';

/** Exit codes of DESIGN §9 (a second Ctrl-C exits 130: cli/process-interrupts.ts). */
export const EXIT = { ok: 0, runFailed: 1, usage: 2 } as const;

/**
 * The `fluksio` command. Returns the exit code: 0 success, 1 a run failed, 2 the input
 * was wrong (the message says what and where, and nothing was created).
 */
export async function main(argv: string[], io?: CliIo): Promise<number> {
  const interrupts =
    io === undefined ? listenForInterrupts({ onlyPrints: PRINT_COMMANDS.has(argv[0] ?? '') }) : null;
  const code = await runProgram(
    argv,
    io ?? processIo(interrupts ?? undefined),
    () => interrupts?.received() ?? null,
  );
  // A command Ctrl-C cancelled (a run recorded `cancelled`) ends killed by SIGINT, so a
  // script running it stops too (exitInterrupted); one that still succeeded exits 0.
  if (code !== EXIT.ok) interrupts?.endIfInterrupted();
  return code;
}

async function runProgram(argv: string[], io: CliIo, received: () => NodeJS.Signals | null): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (result) => {
    code = result;
  });
  // Every failure goes through here, so that each command taking --json fails the same way.
  const fail = (message: string, exitCode: number, problems?: readonly UsageProblem[]): number => {
    if (asksForJson(argv)) io.stdout.write(jsonErrorLine(message, exitCode, problems));
    return exitCode;
  };
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return EXIT.ok;
      // Commander has written its message (and the usage hint) to stderr.
      const hint = error.code === 'commander.unknownOption' ? paramHint(error.message, argv) : null;
      if (hint !== null) io.stderr.write(`${hint}\n`);
      const message = error.message.replace(/^error: /, '');
      return fail(hint === null ? message : `${message} ${hint}`, EXIT.usage);
    }
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\n`);
      return fail(error.message, EXIT.usage, error.problems);
    }
    if (error instanceof LockWaitInterruptedError) {
      // Ended as the signal ends a program (128 + its number); after Ctrl-C, main then has
      // the process die of SIGINT (endIfInterrupted). The signal this process received comes
      // first: flock(1) may have died of the SIGTERM this process sent it on that signal.
      const signal = received() ?? error.signal ?? 'SIGINT';
      io.stderr.write(`fluksio: ${signal} received, ${error.message}\n`);
      return fail(`${signal} received, ${error.message}`, 128 + constants.signals[signal]);
    }
    io.stderr.write(`fluksio: ${messageOf(error)}\n`);
    return fail(messageOf(error), EXIT.runFailed);
  }
}

/** Commands that print what is recorded and change nothing: a reader leaving cancels nothing. */
const PRINT_COMMANDS = new Set(['runs', 'show', 'diff', 'dag', 'status']);

/** Commands that take parameters as `key=value` words. */
const PARAM_COMMANDS = new Set(['run', 'status', 'submit']);

/**
 * `fluksio run --lr=0.1` (or `--lr 0.1`), as argparse and Hydra habits type it: the
 * parameter it likely means, written as fluksio takes it. Null for other unknown options.
 */
function paramHint(message: string, argv: string[]): string | null {
  if (!PARAM_COMMANDS.has(argv[0] ?? '')) return null;
  const option = /unknown option '--([A-Za-z_][\w.-]*)(?:=(.*))?'/.exec(message);
  if (!option) return null;
  const [, name, inline] = option;
  const next = argv[argv.indexOf(`--${name}`) + 1];
  const value = inline ?? (next !== undefined && !next.startsWith('-') ? next : 'VALUE');
  // Commander may have suggested an option (`--jbos`: did you mean --jobs?): the parameter
  // is then the other reading, not a contradiction of it.
  return message.includes('Did you mean')
    ? `(or, for a parameter, without dashes: ${name}=${value})`
    : `(a parameter is given without dashes: ${name}=${value})`;
}

/**
 * Each command's module is imported when that command runs: `fluksio run` never loads
 * the server (fastify, BullMQ), and `--help` loads nothing but this file.
 */
function buildProgram(io: CliIo, setCode: (code: number) => void): Command {
  const program = new Command('fluksio')
    .description(
      'Continuous integration for machine-learning experiments: cached stage graphs, metrics, diffs.',
    )
    .version(FLUKSIO_VERSION, '-V, --version', 'print the version of fluksio')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError('(add --help for usage)');

  program
    .command('run')
    .description('Run the pipeline here, skipping every stage whose inputs did not change')
    .argument(
      '[stages-and-params...]',
      'stages to run, with what they need (default: all); parameters as key=value, key=a,b making a sweep (at most 32 runs)',
    )
    .option('--downstream', 'also run every stage that depends on the named ones')
    .option(
      '--force',
      'run the named stages (default: all) even when cached; the rest still come from the cache',
    )
    .option('--dry-run', 'say what would run or be restored, and why, running nothing (as fluksio status)')
    .option('--no-cache', 'run every stage (results are still cached for next time)')
    .option('--json', 'print one JSON object (a sweep: {group, runs}) instead of the summary')
    .addOption(
      new Option(
        '-j, --jobs <n>',
        "how many things run at once: a sweep's members (each in a scratch checkout of this work tree), or a single run's stages",
      ).default('1'),
    )
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .addOption(
      new Option('--backend <backend>', 'where stages execute: here, or each as a Slurm job')
        .choices(['local', 'slurm'])
        .default('local'),
    )
    .option(
      '--slurm-unstartable-grace <duration>',
      'with --backend slurm: cancel a job pending this long for a reason that never clears (a partition limit it exceeds), failing its stage (default: 2m)',
    )
    .option('--queue', 'queue the run (or sweep) on the control plane instead, as fluksio submit does')
    .option(
      '--remote-cache',
      "on a miss here, restore the stage from the team's cache: what the control plane's runners computed on trusted code (read with FLUKSIO_TOKEN; nothing is written there)",
    )
    .option(
      '--url <url>',
      'with --queue or --remote-cache: the control plane (default: FLUKSIO_URL); the token is FLUKSIO_TOKEN',
    )
    .addHelpText(
      'after',
      "\nA run of some stages only is recorded as such, and is never another run's baseline.\n\n-j N with a sweep runs up to N members at once, each in a scratch checkout of this work tree (uncommitted\nchanges and the ignored deps the pipeline declares included); a stage they compute alike runs once; the last\nmember runs here, so its outputs are the ones left in the work tree. -j N with one run runs N stages at once.\n--queue runs every stage: it takes no stage names.\n\n--remote-cache asks the control plane for a stage this store misses, by the same key (a read token is enough):\nits outputs are downloaded, checked against their digests and restored, and the stage shows `cached` from the\nteam's cache. A control plane that cannot be reached is a warning; a refused token exits 2 before anything runs.\n\nExamples:\n  fluksio run\n  fluksio run lr=0.1 epochs=5\n  fluksio run train\n  fluksio run featurize --downstream\n  fluksio run train --force --dry-run\n  fluksio run lr=0.1,0.01 seed=1,2 -j 2\n  fluksio run lr=0.1,0.01 seed=1,2 --json\n  fluksio run lr=0.1,0.01 --queue\n  fluksio run --remote-cache\n  fluksio run --pipeline examples/logreg/fluksio.yml",
    )
    .action(async (params: string[], options) =>
      setCode(await (await import('./commands/run-command.js')).runCommand(params, options, io)),
    );

  program
    .command('status')
    .description(
      'Say for each stage whether fluksio run would run it or restore it from the cache, and why; runs nothing',
    )
    .argument('[stages-and-params...]', 'as for fluksio run: stages (default: all) and key=value parameters')
    .option('--downstream', 'also the stages that depend on the named ones')
    .option('--force', 'as fluksio run --force: the named stages (default: all) would run')
    .option('--no-cache', 'as fluksio run --no-cache: every stage would run')
    .option('--json', 'print JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .addHelpText(
      'after',
      "\nThe reasons are the run summary's (train.py changed, lr 0.5 → 0.1). A stage after one that runs\n'depends': it is restored if that stage makes its outputs as before. Only the pipeline's fingerprint\ncommand is executed (its output is in every cache key). Exit 0.\n\nExamples:\n  fluksio status\n  fluksio status train lr=0.1\n  fluksio status --json",
    )
    .action(async (params: string[], options) =>
      setCode(await (await import('./commands/status-command.js')).statusCommand(params, options, io)),
    );

  program
    .command('dag')
    .description(
      "Draw the pipeline's stage graph: a layered listing, or Mermaid for READMEs and pull requests",
    )
    .option('--mermaid', 'a Mermaid flowchart')
    .option('--md', 'the Mermaid flowchart in a ```mermaid fence (implies --mermaid)')
    .option('--json', 'print {nodes, edges} as JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here, else dvc.yaml)')
    .addHelpText('after', '\nExamples:\n  fluksio dag\n  fluksio dag --md >> README.md\n  fluksio dag --json')
    .action(async (options) =>
      setCode(await (await import('./commands/dag-command.js')).dagCommand(options, io)),
    );

  program
    .command('runs')
    .description(
      "The runs of this pipeline as an experiment table, newest first: params and metrics as columns (--remote: the control plane's)",
    )
    .option('--limit <n>', 'how many', '20')
    .option('--sort <name>', 'sort by a metric, param, status, commit or when (-NAME: descending)')
    .option('--desc', 'sort descending')
    .option('--asc', 'sort ascending')
    .option(
      '--filter <expr>',
      'only runs where NAME OP VALUE holds, OP one of = != < <= > >= (repeatable: all must hold)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .option('--all', 'a column for every param and metric, not only those that differ between the runs')
    .option('--json', 'print the selected runs as JSON')
    .option('--md', 'print a GitHub-flavoured markdown table')
    .option('--csv', 'print CSV (RFC 4180)')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .option(
      '--remote',
      "this repository's runs of this pipeline on the control plane at FLUKSIO_URL (token: FLUKSIO_TOKEN)",
    )
    .option('--url <url>', 'the runs on the control plane at this URL')
    .addHelpText(
      'after',
      "\nA metric with a goal sorts best first unless --asc or --desc says otherwise; when sorts newest first;\nanything else ascending. Runs without the value come last. A table on a terminal fits its width;\nNO_COLOR or a pipe gives plain text. --remote sorts and filters the newest 200 runs.\n\nExamples:\n  fluksio runs\n  fluksio runs --sort accuracy --limit 5\n  fluksio runs --filter lr=0.1 --filter 'accuracy>0.9' --md\n  fluksio runs --filter status=failed --all --csv > runs.csv",
    )
    .action(async (options) =>
      setCode(await (await import('./commands/runs-command.js')).runsCommand(options, io)),
    );

  program
    .command('show')
    .description('Show one run: its stamp, stages, metrics against its baseline, failures')
    .argument('<run>', 'a run id or a unique prefix of one')
    .option(
      '--json',
      'print the run report as JSON, with its metric series (with --log: {run, stage, status, log})',
    )
    .option('--log <stage>', "print that stage's whole log instead")
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .option('--url <url>', 'a run of the control plane at this URL (API token from FLUKSIO_TOKEN)')
    .option('--remote', 'a run of the control plane at FLUKSIO_URL')
    .option('--web', "open the run's page in a browser instead (as fluksio ui RUN)")
    .action(async (run: string, options: { web?: boolean; pipeline?: string; json?: boolean }) =>
      setCode(
        options.web
          ? await (await import('./commands/ui-command.js')).uiCommand(run, options, io)
          : await (await import('./commands/show-command.js')).showCommand(run, options, io),
      ),
    );

  program
    .command('ui')
    .description("Serve this project's run pages on 127.0.0.1 and open a run's page (the newest by default)")
    .argument('[run]', 'a run id or a unique prefix of one')
    .option('--port <n>', 'the port to listen on (default: a free one)')
    .option('--no-open', 'print the address without opening a browser')
    .option('--json', 'print {url, sweepUrl} as JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .addHelpText(
      'after',
      '\nThe address carries a secret made for this process (as Jupyter does): without it the pages answer 403.',
    )
    .action(async (run: string | undefined, options) =>
      setCode(await (await import('./commands/ui-command.js')).uiCommand(run, options, io)),
    );

  program
    .command('verify')
    .description(
      "Re-execute a run's cached stages in a scratch checkout of its commit and compare their outputs byte for byte with the cache's",
    )
    .argument('<run>', 'a run id or a unique prefix of one (a run made from committed code)')
    .option('--sample <n>', 'how many cached stages to pick at random (default: 3)')
    .option('--all', 'every cached stage')
    .option(
      '--stage <name>',
      'only this stage (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .option('--json', 'print JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .addHelpText(
      'after',
      "\nEach stage runs on the inputs its cache entry was made from (upstream outs restored from the cache) and is\nreported deterministic (same key inputs, same bytes), nondeterministic (same key inputs, other bytes, other\nagain on a second execution) or stale (the key inputs differ from the entry's, or a fresh run reproducibly\nmakes other bytes). Exit 0: all deterministic; 1: not; 2: bad input.\n\nExamples:\n  fluksio verify 01JD4\n  fluksio verify 01JD4 --all --json\n  fluksio verify 01JD4 --stage train",
    )
    .action(async (run: string, options) =>
      setCode(await (await import('./commands/verify-command.js')).verifyCommand(run, options, io)),
    );

  program
    .command('diff')
    .description(
      "Compare two runs' params and metrics, only what changed: runs named by id or by git revision (default: against the first's baseline)",
    )
    .argument('<run>', 'a run id or a unique prefix, or a git revision (branch, tag, commit)')
    .argument('[other]', 'the run or revision to compare against')
    .option('--all', 'every param and metric, not only those that changed')
    .option('--md', 'print GitHub-flavoured markdown (for a pull request)')
    .option('--json', 'print JSON (every param and metric)')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .option('--remote', 'runs of the control plane at FLUKSIO_URL (token: FLUKSIO_TOKEN)')
    .option('--url <url>', 'runs of the control plane at this URL')
    .addHelpText(
      'after',
      "\nA revision stands for its newest clean, successful run (one with the other side's params first), or for its\nnearest first-parent ancestor's, which is said. One revision alone compares this workspace's newest run\nwith it. A name that is both a run id prefix and a revision is the run: rev:NAME forces the revision,\nrun:NAME the run. With --remote, a revision is resolved by git here and stands for the control plane's run\nat it (a branch this clone lacks, for that branch's newest run there); one revision alone compares HEAD's\nrun with it.\n\nExamples:\n  fluksio diff 01JD4X                 a run against its baseline\n  fluksio diff main                   the newest run here against main's\n  fluksio diff main --remote          HEAD's run on the control plane against main's\n  fluksio diff my-branch main --md    a branch's run against main's, for a pull request\n  fluksio diff rev:01ab23 01JD4X      commit 01ab23's run against run 01JD4X",
    )
    .action(async (run: string, other: string | undefined, options) =>
      setCode(await (await import('./commands/diff-command.js')).diffCommand(run, other, options, io)),
    );

  program
    .command('doctor')
    .description(
      'Check the local store (.fluksio/): run journals, database, index, blobs; --repair rebuilds it',
    )
    .option(
      '--repair',
      'rebuild the database and the index from the run journals (a damaged database is moved aside)',
    )
    .option('--json', 'print JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .action(async (options) =>
      setCode(await (await import('./commands/doctor-command.js')).doctorCommand(options, io)),
    );

  program
    .command('submit')
    .description("Queue this repository's pushed HEAD on the control plane (a sweep queues its grid)")
    .argument('[params...]', 'parameters as key=value; key=a,b makes a sweep')
    .option('--wait', 'follow the runs to the end and print their summary')
    .option('--json', 'print JSON')
    .option('--no-cache', 'run every stage (results are still cached)')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .option('--url <url>', 'the control plane (default: FLUKSIO_URL); the token is FLUKSIO_TOKEN')
    .action(async (params: string[], options) =>
      setCode(await (await import('./commands/submit-command.js')).submitCommand(params, options, io)),
    );

  program
    .command('cancel')
    .description('Cancel a run on the control plane and wait for it to end')
    .argument('<run>', 'a run id or a unique prefix of one')
    .option('--json', 'print JSON')
    .option('--wait <seconds>', 'how long to wait for the run to end (0: do not wait)', '60')
    .option('--url <url>', 'the control plane (default: FLUKSIO_URL)')
    .action(async (run: string, options) =>
      setCode(await (await import('./commands/cancel-command.js')).cancelCommand(run, options, io)),
    );

  program
    .command('pull')
    .description("Download a run's outputs from the control plane, verified")
    .argument('<run>', 'a run id or a unique prefix of one')
    .argument('[out]', 'one output path (default: all)')
    .option('--to <dir>', 'where to write them (default: here)')
    .option('--force', 'replace files that exist with other contents')
    .option('--json', 'print {run, to, outs, written, unchanged} as JSON')
    .option('--url <url>', 'the control plane (default: FLUKSIO_URL)')
    .action(async (run: string, out: string | undefined, options) =>
      setCode(await (await import('./commands/pull-command.js')).pullCommand(run, out, options, io)),
    );

  addServerCommands(program, io, setCode);

  program
    .command('gc')
    .description(
      "Drop old runs, cache entries and blobs nothing references: this project's .fluksio/, or the control plane's store",
    )
    .option('--keep-days <n>', 'keep what is younger than this', '30')
    .option('--json', 'print JSON')
    .option('--pipeline <path>', 'the pipeline file whose store to collect (default: fluksio.yml here)')
    .option(
      '--server',
      "the control plane's store on its host (the default when DATABASE_URL or FLUKSIO_DATA_DIR is set)",
    )
    .action(async (options) =>
      setCode(await (await import('./commands/gc-command.js')).gcCommand(options, io)),
    );

  return program;
}
