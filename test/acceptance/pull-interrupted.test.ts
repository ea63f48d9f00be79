import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { waitFor } from '../helpers/wait-for.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

let database: TestDatabase;
let world: ControlPlaneWorld;
let front: Server | null = null;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  front?.closeAllConnections();
  await new Promise((resolve) => front?.close(resolve) ?? resolve(undefined));
  front = null;
  await world.close();
});

const PIPELINE = `version: 1
stages:
  train:
    cmd: head -c 1048576 /dev/zero > model.bin
    outs: [model.bin]
`;

/**
 * A balancer in front of the control plane whose blob downloads stall: the answer's head and
 * first bytes pass, the rest never comes, as over a link that went quiet.
 */
async function startStallingFront(target: string): Promise<string> {
  front = createServer((incoming, outgoing) => {
    const proxied = httpRequest(new URL(incoming.url ?? '/', target), {
      method: incoming.method,
      headers: incoming.headers,
    });
    proxied.on('response', (answer: IncomingMessage) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!(incoming.url ?? '').startsWith('/api/v1/blobs/')) {
        answer.pipe(outgoing);
        return;
      }
      answer.once('data', (chunk: Buffer) => {
        outgoing.write(chunk);
        answer.pause();
      });
    });
    incoming.pipe(proxied);
  });
  await new Promise<void>((resolve) => front?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
}

test('Ctrl-C during fluksio pull stops the download at once, leaving no file, whole or partial', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model.bin\n' });
  const token = await world.allow([project.repository]);
  await world.runner('box');
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  expect((await world.waitFor(runId)).run.status).toBe('succeeded');

  const url = await startStallingFront(world.app.url);
  const pulled = join(project.repo.dir, 'pulled');
  const pull = spawnFluksio(['pull', runId, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: url, FLUKSIO_TOKEN: token },
  });
  await waitFor(
    'the download to have begun',
    async () => (await readdir(pulled).catch(() => [])).length > 0,
    30_000,
  );
  pull.child.kill('SIGINT');
  const ended = await Promise.race([
    pull.exited,
    new Promise((resolve) => setTimeout(() => resolve('still downloading'), 20_000)),
  ]);
  if (ended === 'still downloading') await pull.stop('SIGKILL');
  // It ends as the shell's programs do on Ctrl-C: killed by SIGINT.
  expect(ended, pull.output()).toBe('SIGINT');
  expect(pull.output()).toMatch(
    /Interrupted: 0 of the 1 files and folders to write were written whole; "model.bin"/,
  );
  expect(await readdir(pulled)).toEqual([]);
});
