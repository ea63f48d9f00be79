import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/** How many candidates an ambiguous prefix lists, as the local store's findRun does. */
const CANDIDATES_SHOWN = 10;
/** A whole run id: a ULID, 26 characters of Crockford's base32. */
const WHOLE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;

/**
 * The id of the control plane's run that `idOrPrefix` names: a whole id as it is, or the
 * one run of the token's repositories whose id starts with it (the short ids fluksio
 * prints). UsageError when several do (listing them), and when none does — or, with
 * `missing: 'null'`, null (the name may be something else, a git revision).
 */
export async function resolveRemoteRun(client: ControlPlaneClient, idOrPrefix: string): Promise<string>;
export async function resolveRemoteRun(
  client: ControlPlaneClient,
  idOrPrefix: string,
  options: { missing: 'null' },
): Promise<string | null>;
export async function resolveRemoteRun(
  client: ControlPlaneClient,
  idOrPrefix: string,
  options: { missing: 'throw' | 'null' } = { missing: 'throw' },
): Promise<string | null> {
  if (WHOLE_ID.test(idOrPrefix)) return idOrPrefix.toUpperCase();
  if (!/^[0-9A-Za-z]{1,26}$/.test(idOrPrefix)) {
    if (options.missing === 'null') return null;
    throw new UsageError(
      `"${idOrPrefix}" is not a run id or the start of one (letters and digits, e.g. 01JD4X)`,
    );
  }
  const runs = await client.listRuns({ prefix: idOrPrefix, limit: CANDIDATES_SHOWN + 1 });
  const [only] = runs;
  if (only === undefined) {
    if (options.missing === 'null') return null;
    throw new UsageError(`No run of the control plane matches "${idOrPrefix}" (see fluksio runs --remote)`);
  }
  if (runs.length === 1) return only.id;
  const listed = runs
    .slice(0, CANDIDATES_SHOWN)
    .map((run) => run.id)
    .sort();
  throw new UsageError(
    `Run id "${idOrPrefix}" matches more than one run of the control plane (${listed.join(', ')}${runs.length > CANDIDATES_SHOWN ? ' and more' : ''}); give more characters`,
  );
}
