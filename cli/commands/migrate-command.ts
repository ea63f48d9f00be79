import type { CliIo } from '../../present/terminal/cli-io.js';
import { openServerDatabase } from '../server/server-database.js';

/** `fluksio migrate`: applies the pending migrations to the control plane's database. */
export async function migrateCommand(io: CliIo): Promise<number> {
  const database = await openServerDatabase(io);
  await database.close();
  io.stdout.write('migrations applied\n');
  return 0;
}
