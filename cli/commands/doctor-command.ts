import { existsSync } from 'node:fs';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { checkLocalStore, type LocalStoreCheck } from '../../local/check-local-store.js';
import { localStorePaths } from '../../local/local-store-paths.js';
import { locateProject } from '../../local/locate-project.js';
import { repairLocalStore, type LocalStoreRepair } from '../../local/repair-local-store.js';
import { userCacheDir } from '../../local/user-cache-dir.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { INTERRUPTED_EXIT } from '../process-interrupts.js';

export interface DoctorCommandOptions {
  repair?: boolean;
  json?: boolean;
  pipeline?: string;
}

/**
 * `fluksio doctor [--repair]`: checks the local store of the pipeline (journals, database,
 * index, blobs) and says what is wrong and what to do; with `--repair`, rebuilds the
 * database (a damaged one moved aside) and the index from the run journals, then checks
 * again. Exit 0 when the store is sound (after the repair), 1 otherwise.
 */
export async function doctorCommand(options: DoctorCommandOptions, io: CliIo): Promise<number> {
  const project = await locateProject(options.pipeline, io.cwd);
  const paths = localStorePaths(project.stateDir);
  if (!existsSync(paths.journalDir) && !existsSync(paths.databaseDir)) {
    throw new UsageError(`No local store for ${project.displayPath} yet: "fluksio run" makes one`);
  }
  const templateRoot = userCacheDir(io.env);
  const repair = options.repair
    ? await repairLocalStore(project.stateDir, {
        templateRoot,
        ...(io.signal ? { signal: io.signal } : {}),
        onWait: (holder) =>
          io.stderr.write(
            `Waiting for another fluksio process (${holder}) to finish with ${project.stateDir}…\n`,
          ),
      })
    : null;
  if (repair?.stopped) {
    if (options.json) io.stdout.write(`${JSON.stringify({ store: project.stateDir, repair }, null, 2)}\n`);
    io.stderr.write(
      repair.stopped === 'before-changes'
        ? `fluksio: repair stopped before changing anything; nothing was changed\n`
        : `fluksio: repair stopped after applying ${repair.runsApplied} run journal(s) to the database; the index is as it was: run "fluksio doctor --repair" again to finish\n`,
    );
    return INTERRUPTED_EXIT;
  }
  const { check } = await checkLocalStore(project.stateDir, { templateRoot });
  const healthy = isHealthy(check);
  if (options.json) {
    io.stdout.write(`${JSON.stringify({ store: project.stateDir, healthy, ...check, repair }, null, 2)}\n`);
  } else {
    io.stdout.write(renderCheck(project.stateDir, check, repair, healthy));
  }
  return healthy ? 0 : 1;
}

/** Sound: every journal reads, the database opens and reads, and the index is not behind. */
function isHealthy(check: LocalStoreCheck): boolean {
  return check.journal.damaged.length === 0 && check.database.state !== 'damaged' && check.index.behind === 0;
}

function renderCheck(
  stateDir: string,
  check: LocalStoreCheck,
  repair: LocalStoreRepair | null,
  healthy: boolean,
): string {
  const lines = [`Local store ${stateDir}`];
  if (repair) {
    if (repair.movedDatabaseTo) {
      lines.push(`  repaired: moved the damaged database to ${repair.movedDatabaseTo} (kept, not deleted)`);
    }
    lines.push(
      `  repaired: applied ${repair.runsApplied} run journal(s) to the database; rebuilt the index (${repair.cacheEntries} cache entries)`,
    );
  }
  const { journal, database, index } = check;
  lines.push(
    `  journal   ${journal.runs} run(s)${journal.unfinished.length ? `, ${journal.unfinished.length} not finished (interrupted, or running now): ${journal.unfinished.join(', ')}` : ''}`,
    ...journal.damaged.map((line) => `            damaged: ${line} (that run's later records are not read)`),
    `  database  ${database.state === 'absent' ? 'not made yet (the first "fluksio runs" makes it)' : database.state}${database.problem ? `: ${database.problem}` : ''}`,
    `  index     ${index.cacheEntries} cache entries${index.behind ? `, ${index.behind} missing or older than the journals say (they would re-run)` : ''}`,
    `  blobs     ${index.missingBlobs ? `${index.missingBlobs} cache entries name blobs that are gone (their stages re-run)` : 'every cache entry has its blobs'}`,
  );
  if (healthy) lines.push('The store is sound.');
  else if (!repair) {
    lines.push(
      'Run "fluksio doctor --repair" to rebuild the database and the index from the run journals: a damaged database is moved aside, never deleted, and blobs and cache entries are kept.',
    );
  } else lines.push('Some damage remains: the lines above say what; the damaged files are left as they are.');
  return `${lines.join('\n')}\n`;
}
