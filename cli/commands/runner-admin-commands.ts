import { fitTable } from '../render/fit-table.js';
import { outputWidth } from '../render/output-width.js';
import { ownerOf, RepositoryName } from '../../schemas/protocol/repository-name.js';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { listRunners } from '../../store/runners/list-runners.js';
import { removeRunner } from '../../store/runners/remove-runner.js';
import { RunnerExistsError } from '../../store/runners/runner-exists-error.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { newToken, openServerDatabase } from '../server/server-database.js';
import { UsageError } from '../../present/terminal/usage-error.js';

export interface RunnerAddOptions {
  name: string;
  owner: string;
  repo: string[];
  labels: string;
  json?: boolean;
}

/**
 * `fluksio runner add`: registers a runner bound to an owner (and optionally some of its
 * repositories) with its labels, and prints its token once; only its hash is kept.
 */
export async function runnerAddCommand(options: RunnerAddOptions, io: CliIo): Promise<number> {
  const problems: string[] = [];
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(options.name))
    problems.push(`--name: "${options.name}" is not a name (letters, digits, . _ -)`);
  if (!/^[A-Za-z0-9_.-]+$/.test(options.owner))
    problems.push(
      `--owner: "${options.owner}" is not an owner (a GitHub user or organisation, a host, or "local")`,
    );
  const labels = options.labels
    .split(',')
    .map((label) => label.trim())
    .filter(Boolean);
  for (const label of labels)
    if (!/^[A-Za-z0-9_.-]+$/.test(label)) problems.push(`--labels: "${label}" is not a label`);
  for (const repo of options.repo) {
    if (!RepositoryName.safeParse(repo).success)
      problems.push(`--repo: "${repo}" is not a repository as owner/name`);
    else if (ownerOf(repo) !== options.owner)
      problems.push(`--repo: "${repo}" does not belong to --owner ${options.owner}`);
  }
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  const token = await newToken('runner');
  const database = await openServerDatabase(io);
  try {
    await createRunner({
      db: database.db,
      name: options.name,
      owner: options.owner,
      repositories: options.repo,
      labels,
      tokenHash: hashToken(token),
    });
  } catch (error) {
    if (error instanceof RunnerExistsError)
      throw new UsageError(`--name: a runner named ${options.name} exists already`, { cause: error });
    throw error;
  } finally {
    await database.close();
  }
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ name: options.name, owner: options.owner, repositories: options.repo, labels, token }, null, 2)}\n`,
    );
  } else {
    io.stdout.write(
      `Runner ${options.name} registered for ${options.repo.length > 0 ? options.repo.join(', ') : `every repository of ${options.owner}`} with labels ${labels.join(', ') || '(none)'}.\n` +
        `Its token, shown this once:\n\n  ${token}\n\nStart it on its machine with:\n  FLUKSIO_RUNNER_TOKEN=<token> FLUKSIO_URL=<url> fluksio runner\n`,
    );
  }
  return 0;
}

/** `fluksio runner remove NAME`: its token stops working at once. */
export async function runnerRemoveCommand(name: string, io: CliIo): Promise<number> {
  const database = await openServerDatabase(io);
  try {
    if (!(await removeRunner({ db: database.db, name })))
      throw new UsageError(`No runner named ${name} (see fluksio runners)`);
  } finally {
    await database.close();
  }
  io.stdout.write(`Runner ${name} removed\n`);
  return 0;
}

/**
 * `fluksio runners`: the registered runners, their labels, when each was last seen and the
 * fluksio version it ran then (`?` when it did not say: a client older than 0.1.0's header).
 */
export async function runnersCommand(options: { json?: boolean }, io: CliIo): Promise<number> {
  const database = await openServerDatabase(io);
  try {
    const runners = await listRunners({ db: database.db });
    const shown = runners.map(({ tokenHash: _hidden, ...runner }) => runner);
    if (options.json) {
      io.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      return 0;
    }
    const rows = shown.map((runner) => [
      runner.name,
      runner.owner,
      runner.repositories.join(', ') || '(all)',
      runner.labels.join(', '),
      runner.lastSeenAt?.toISOString().replace('T', ' ').slice(0, 16) ?? 'never',
      runner.version ?? (runner.lastSeenAt ? '?' : ''),
    ]);
    const table = fitTable({
      head: ['name', 'owner', 'repositories', 'labels', 'last seen', 'version'],
      rows,
      width: outputWidth(io.stdout, io.env),
      droppable: ['version', 'last seen', 'owner'],
    });
    io.stdout.write(`${table}\n`);
    return 0;
  } finally {
    await database.close();
  }
}
