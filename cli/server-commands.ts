import { type Command, Option } from 'commander';
import type { CliIo } from '../present/terminal/cli-io.js';

/**
 * The commands that run or manage the control plane and its runners (`app`, `migrate`,
 * `runner`, `runners`, `token`), added to `program` in the order `fluksio --help` lists
 * them. As in main's buildProgram, each command's module is imported when it runs.
 */
export function addServerCommands(program: Command, io: CliIo, setCode: (code: number) => void): void {
  program
    .command('app')
    .description(
      'Run the control plane: runner API, submit API, webhook intake, delivery worker, outbox, sweeper (settings from the environment)',
    )
    .addHelpText(
      'after',
      '\nEnvironment: REDIS_URL (required), DATABASE_URL (else embedded PGlite under FLUKSIO_DATA_DIR), HOST, PORT,\nFLUKSIO_LEASE_TTL, FLUKSIO_HEARTBEAT_INTERVAL, FLUKSIO_SWEEP_INTERVAL, FLUKSIO_QUEUE_TIMEOUT, FLUKSIO_CLONE_HOSTS,\nFLUKSIO_ALLOW_FILE_URLS, FLUKSIO_METRICS_TOKEN.',
    )
    .option(
      '--role <role>',
      'web: the HTTP APIs and the webhook intake; worker: deliveries, the GitHub outbox and the sweeper; all: both',
      'all',
    )
    .action(async (options: { role: string }) =>
      setCode(await (await import('./commands/app-command.js')).appCommand(options, io)),
    );

  program
    .command('migrate')
    .description('Apply the database migrations (DATABASE_URL, else the embedded store)')
    .action(async () => setCode(await (await import('./commands/migrate-command.js')).migrateCommand(io)));

  const runner = program
    .command('runner')
    .description(
      'Run a self-hosted runner (token from FLUKSIO_RUNNER_TOKEN or --token-file), or manage runners',
    )
    .option('--work-dir <dir>', 'mirrors, checkouts and the blob cache')
    .option('--concurrency <n>', 'runs at once', '1')
    .addOption(
      new Option(
        '--backend <backend>',
        'where stages execute: here, or each as a Slurm job from this login node',
      )
        .choices(['plain', 'slurm'])
        .default('plain'),
    )
    .option('--jobs <n>', 'stages of one run at once (default: 1; with --backend slurm, 8)')
    .option(
      '--slurm-unstartable-grace <duration>',
      'with --backend slurm: cancel a job pending this long for a reason that never clears (a partition limit it exceeds), failing its stage (default: 2m)',
    )
    .option('--accept-forks', "execute fork pull requests' runs (always sandboxed, never with the secrets)")
    .option('--sandbox', "run every run's stages in a bubblewrap sandbox (fork runs always are)")
    .option(
      '--stage-user <user>',
      'run every stage as this dedicated unprivileged user (the runner runs as root)',
    )
    .option('--env-file <file>', 'secrets for the stages, as NAME=value lines (masked in every log)')
    .option('--token-file <file>', 'a file holding the runner token')
    .option('--url <url>', 'the control plane (default: FLUKSIO_URL)')
    .action(async (options) =>
      setCode(await (await import('./commands/runner-command.js')).runnerCommand(options, io)),
    );
  runner
    .command('add')
    .description('Register a runner and print its token (shown once)')
    .requiredOption('--name <name>', 'its name')
    .requiredOption('--owner <owner>', 'the GitHub owner (or host, or "local") whose repositories it may run')
    .option(
      '--repo <owner/name>',
      'only this repository (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .option('--labels <a,b>', 'its labels', '')
    .option('--json', 'print JSON')
    .action(async (options) =>
      setCode(await (await import('./commands/runner-admin-commands.js')).runnerAddCommand(options, io)),
    );
  runner
    .command('remove')
    .description('Remove a runner; its token stops working')
    .argument('<name>')
    .action(async (name: string) =>
      setCode(await (await import('./commands/runner-admin-commands.js')).runnerRemoveCommand(name, io)),
    );

  program
    .command('runners')
    .description('List the registered runners')
    .option('--json', 'print JSON')
    .action(async (options) =>
      setCode(await (await import('./commands/runner-admin-commands.js')).runnersCommand(options, io)),
    );

  const token = program.command('token').description('Manage API tokens for submitting and reading runs');
  token
    .command('add')
    .description('Create an API token (shown once)')
    .requiredOption('--name <name>', 'its name')
    .option(
      '--repo <owner/name>',
      'a repository it may act on (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .option('--submit', 'allow submitting runs (default: read only)')
    .option('--json', 'print JSON')
    .action(async (options) =>
      setCode(await (await import('./commands/token-commands.js')).tokenAddCommand(options, io)),
    );
  token
    .command('revoke')
    .description('Revoke an API token')
    .argument('<name>')
    .action(async (name: string) =>
      setCode(await (await import('./commands/token-commands.js')).tokenRevokeCommand(name, io)),
    );
}
