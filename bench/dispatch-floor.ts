import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { request } from 'undici';
import type { CommitReference } from './durable-commit.js';
import { exited, lineOf } from './fluksio-command.js';
import { openScratchEnvironment } from './scratch-environment.js';
import { measureSubmitToClaim, runnerProcess, type SubmitToClaim } from './submit-to-claim.js';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * Submit → claim through the same three processes as fluksio deployed, in trivial code
 * (dispatch-floor-peer.ts): a node:http server that inserts one row (one commit) and answers
 * a claim parked in it, a runner process parked in that claim, the submitter here, sampled
 * as fluksio is (measureSubmitToClaim, commits timed by `reference`). What dispatch costs on
 * this machine before any of fluksio's code: two hops between processes and one commit.
 */
export async function measureDispatchFloor(
  reference: CommitReference,
  samples: number,
  warmup: number,
): Promise<SubmitToClaim> {
  const scratch = await openScratchEnvironment('floor');
  const server = spawn(
    process.execPath,
    [...process.execArgv, join(here, 'dispatch-floor-peer.ts'), 'server'],
    {
      env: { PATH: process.env.PATH, DATABASE_URL: scratch.databaseUrl },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const timing = postgres(scratch.databaseUrl, { max: 1, onnotice: () => {} });
  let runner: ReturnType<typeof runnerProcess> | null = null;
  try {
    const [, url = ''] = await lineOf(server, /listening on (http\S+)/);
    runner = runnerProcess(url, '', ['dispatch-floor-peer.ts', 'runner']);
    // A body the size of `fluksio submit`'s.
    const body = JSON.stringify({
      repository: 'bench/model',
      commit: 'a'.repeat(40),
      labels: ['cpu'],
      params: {},
    });
    return await measureSubmitToClaim({
      url,
      runner,
      reference,
      timing,
      samples,
      warmup,
      submit: async (key) => {
        const answer = await request(`${url}/submit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body,
        });
        return answer.body.json();
      },
    });
  } finally {
    await runner?.close();
    server.kill('SIGTERM');
    await exited(server);
    await timing.end();
    await scratch.close();
  }
}
