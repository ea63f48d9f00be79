import { Command, CommanderError, Option } from 'commander';
import { processIo, type CliIo } from './cli-io.js';
import { diffCommand } from './commands/diff-command.js';
import { runCommand } from './commands/run-command.js';
import { runsCommand } from './commands/runs-command.js';
import { showCommand } from './commands/show-command.js';
import { UsageError } from './usage-error.js';

/** Exit codes of DESIGN §9. */
export const EXIT = { ok: 0, runFailed: 1, usage: 2 } as const;

/**
 * The `fluksio` command. Returns the exit code: 0 success, 1 a run failed, 2 the input
 * was wrong (the message says what and where, and nothing was created).
 */
export async function main(argv: string[], io: CliIo = processIo(interruptSignal())): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (result) => {
    code = result;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\n`);
      return EXIT.usage;
    }
    io.stderr.write(`fluksio: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.runFailed;
  }
}

function buildProgram(io: CliIo, setCode: (code: number) => void): Command {
  const program = new Command('fluksio')
    .description(
      'Continuous integration for machine-learning experiments: cached stage graphs, metrics, diffs.',
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError('(add --help for usage)');

  program
    .command('run')
    .description('Run the pipeline here, skipping every stage whose inputs did not change')
    .argument('[params...]', 'parameters as key=value; key=a,b makes a sweep (at most 32 runs)')
    .option('--no-cache', 'run every stage (results are still cached for next time)')
    .option('--json', 'print one JSON object (a sweep: {group, runs}) instead of the summary')
    .addOption(new Option('--jobs <n>', 'how many stages may run at once').default('1'))
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .addHelpText(
      'after',
      '\nExamples:\n  fluksio run\n  fluksio run lr=0.1 epochs=5\n  fluksio run lr=0.1,0.01 seed=1,2 --json\n  fluksio run --pipeline examples/logreg/fluksio.yml',
    )
    .action(async (params: string[], options) => setCode(await runCommand(params, options, io)));

  program
    .command('runs')
    .description('List the runs of this pipeline, newest first')
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'print JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .action(async (options) => setCode(await runsCommand(options, io)));

  program
    .command('show')
    .description('Show one run: its stamp, stages, metrics against its baseline, failures')
    .argument('<run>', 'a run id or a unique prefix of one')
    .option('--json', 'print JSON')
    .option('--log <stage>', "print that stage's whole log instead")
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .action(async (run: string, options) => setCode(await showCommand(run, options, io)));

  program
    .command('diff')
    .description("Compare a run's metrics with another run's (default: its baseline)")
    .argument('<run>', 'a run id or a unique prefix')
    .argument('[other]', 'the run to compare against')
    .option('--json', 'print JSON')
    .option('--pipeline <path>', 'the pipeline file (default: fluksio.yml here)')
    .action(async (run: string, other: string | undefined, options) =>
      setCode(await diffCommand(run, other, options, io)),
    );

  return program;
}

/**
 * Ctrl-C cancels the run in progress: stages get SIGINT, then SIGTERM and SIGKILL, the
 * run is recorded `cancelled`. A second Ctrl-C exits at once.
 */
function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(`\nfluksio: ${signal} received, cancelling (again to exit at once)\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return controller.signal;
}
