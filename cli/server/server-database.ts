import { pino } from 'pino';
import { readDatabaseSettings } from '../../app/control-plane-settings.js';
import { InvalidSettingsError } from '../../app/invalid-settings-error.js';
import {
  openControlPlaneDatabase,
  type ControlPlaneDatabase,
} from '../../app/open-control-plane-database.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/**
 * The control plane's database, for the administrative commands run on its host
 * (`fluksio runner add`, `token add`, `migrate`, `gc`): DATABASE_URL, or the embedded
 * store under FLUKSIO_DATA_DIR. Migrated on open.
 */
export async function openServerDatabase(io: CliIo): Promise<ControlPlaneDatabase> {
  let settings;
  try {
    settings = readDatabaseSettings(io.env);
  } catch (error) {
    if (error instanceof InvalidSettingsError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  return openControlPlaneDatabase(settings, pino({ level: 'warn' }, io.stderr));
}

/** A new token: 256 random bits, with a prefix saying what it is for (`fxr_` runner, `fxt_` API). */
export async function newToken(kind: 'runner' | 'api'): Promise<string> {
  const { randomBytes } = await import('node:crypto');
  return `${kind === 'runner' ? 'fxr' : 'fxt'}_${randomBytes(32).toString('base64url')}`;
}
