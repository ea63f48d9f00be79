import type { Logger } from 'pino';
import { openControlPlaneDatabase, type DatabaseSettings } from './open-control-plane-database.js';

/** `fluksio migrate`: applies the migrations the control plane's database has not seen, then closes it. */
export async function migrateControlPlaneDatabase(settings: DatabaseSettings, logger: Logger): Promise<void> {
  const database = await openControlPlaneDatabase(settings, logger);
  await database.close();
}
