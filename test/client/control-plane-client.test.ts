import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import {
  ControlPlaneError,
  ControlPlaneUnreachableError,
  StaleLeaseError,
  UnauthorizedError,
} from '../../client/control-plane-errors.js';
import { FakeControlPlane } from '../runner-daemon/helpers/fake-control-plane.js';
import { makeClaim } from '../runner-daemon/helpers/make-claim.js';
import { waitFor } from '../helpers/wait-for.js';

let plane: FakeControlPlane;
beforeEach(async () => {
  plane = new FakeControlPlane();
  await plane.start();
});
afterEach(async () => {
  await plane.stop();
});

const client = (overrides: { token?: string; url?: string } = {}) =>
  new ControlPlaneClient({
    url: overrides.url ?? plane.url,
    token: overrides.token ?? plane.token,
    retries: 3,
    minRetryDelayMs: 10,
    maxRetryDelayMs: 50,
  });

describe('the control-plane client', () => {
  test('a claim comes back validated; an empty queue is null after the wait', async () => {
    const queued = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    expect(await client().claim(0, false)).toEqual(queued.claim);
    expect(await client().claim(0, false)).toBeNull();
  });

  test('5xx and 429 answers are retried until one succeeds', async () => {
    const { claim } = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    await client().claim(0, false);
    plane.failures = { count: 2, status: 503 };
    expect(await client().heartbeat({ runId: claim.run.id, lease: claim.lease })).toEqual({
      cancel: false,
      reason: null,
      finishAs: null,
    });
    plane.failures = { count: 1, status: 429 };
    await client().heartbeat({ runId: claim.run.id, lease: claim.lease });
    expect(plane.requests.filter((request) => request.line.endsWith('/heartbeat'))).toHaveLength(5);
  });

  test('5xx answers past the last retry are a ControlPlaneUnreachableError with the last sentence', async () => {
    const { claim } = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    await client().claim(0, false);
    plane.failures = { count: 100, status: 503 };
    const failing = client().heartbeat({ runId: claim.run.id, lease: claim.lease });
    await expect(failing).rejects.toBeInstanceOf(ControlPlaneUnreachableError);
    await expect(failing).rejects.toThrow(
      /^Could not reach the control plane at http:\/\/127\.0\.0\.1:\d+ \(POST \/api\/v1\/runs\/\w+\/heartbeat\): it answered 503: the fake is failing on purpose$/,
    );
    expect(plane.requests.filter((request) => request.line.endsWith('/heartbeat'))).toHaveLength(4);
  });

  test('a persisting call is retried past its budget until its signal ends, then gives up at the budget', async () => {
    const { claim } = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    await client().claim(0, false);
    const heartbeats = () => plane.requests.filter((request) => request.line.endsWith('/heartbeat')).length;
    plane.failures = { count: 8, status: 503 };
    const persisting = new AbortController();
    expect(
      await client().heartbeat({ runId: claim.run.id, lease: claim.lease }, { persist: persisting.signal }),
    ).toMatchObject({ cancel: false });
    expect(heartbeats()).toBe(9);

    plane.failures = { count: 100, status: 503 };
    const failing = client().heartbeat(
      { runId: claim.run.id, lease: claim.lease },
      { persist: persisting.signal },
    );
    await waitFor('attempts past the budget of 4', () => heartbeats() >= 9 + 6);
    persisting.abort();
    await expect(failing).rejects.toBeInstanceOf(ControlPlaneUnreachableError);
  });

  test('a persisting call the control plane keeps failing ends after maxPersistMs, though its signal never ends', async () => {
    const { claim } = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    await client().claim(0, false);
    plane.failures = { count: 1_000_000, status: 500 };
    const persisting = new AbortController();
    const capped = new ControlPlaneClient({
      url: plane.url,
      token: plane.token,
      retries: 3,
      minRetryDelayMs: 10,
      maxRetryDelayMs: 50,
      // Room for the four attempts of the budget on a busy machine (they took over 400 ms
      // there), so that it can persist past them before the cap.
      maxPersistMs: 5_000,
    });
    const failing = capped.heartbeat(
      { runId: claim.run.id, lease: claim.lease },
      { persist: persisting.signal },
    );
    await expect(failing).rejects.toBeInstanceOf(ControlPlaneUnreachableError);
    expect(persisting.signal.aborted).toBe(false);
    // Past the budget of 3 retries, for a while.
    expect(plane.requests.filter((request) => request.line.endsWith('/heartbeat')).length).toBeGreaterThan(4);
  });

  test('a stale lease is a StaleLeaseError, a wrong token an UnauthorizedError, neither retried', async () => {
    const { claim } = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    await client().claim(0, false);
    const stale = client().heartbeat({ runId: claim.run.id, lease: 'f'.repeat(64) });
    await expect(stale).rejects.toBeInstanceOf(StaleLeaseError);
    await expect(stale).rejects.toThrow(/answered 409 to POST \/api\/v1\/runs\/.*\/heartbeat: stale lease/);
    const wrongToken = 'not-the-token-0123456789';
    const refused = client({ token: wrongToken }).claim(0, false);
    await expect(refused).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(refused).rejects.not.toThrow(new RegExp(wrongToken));
    expect(plane.requests.filter((request) => request.line.endsWith('/heartbeat'))).toHaveLength(1);
  });

  test('the token travels only in the Authorization header', async () => {
    await client().claim(0, false);
    const [request] = plane.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${plane.token}`);
    expect(request?.line).not.toContain(plane.token);
    const otherHeaders = Object.entries(request?.headers ?? {}).filter(([name]) => name !== 'authorization');
    expect(JSON.stringify(otherHeaders)).not.toContain(plane.token);
  });

  test('a control plane that stays down is a ControlPlaneUnreachableError naming it, not the token', async () => {
    await plane.stop();
    const failing = client().claim(0, false);
    await expect(failing).rejects.toBeInstanceOf(ControlPlaneUnreachableError);
    await expect(failing).rejects.toThrow(
      /Could not reach the control plane at http:\/\/127\.0\.0\.1:\d+ \(POST \/api\/v1\/runner\/claim\): ECONNREFUSED/,
    );
    await expect(failing).rejects.not.toThrow(new RegExp(plane.token));
  });

  test('a reply outside the protocol is refused with what was wrong', async () => {
    const { claim } = plane.enqueue(makeClaim({ repoDir: '/tmp/x', commit: 'a'.repeat(40) }));
    await client().claim(0, false);
    const run = plane.runs.get(claim.run.id);
    if (run) run.stopWith = { reason: 'stop', finishAs: 'exploded' as 'cancelled' };
    await expect(client().heartbeat({ runId: claim.run.id, lease: claim.lease })).rejects.toThrow(
      ControlPlaneError,
    );
  });

  test('a URL with credentials or another scheme is refused up front', () => {
    expect(() => client({ url: 'https://user:pw@example.com' })).toThrow(/carries credentials/);
    expect(() => client({ url: 'ftp://example.com' })).toThrow(/is not http\(s\)/);
  });

  test('a control plane served under a path gets every request under that path', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    try {
      expect(await client({ url: `${server.url}/fluksio/` }).health()).toEqual({ ok: true });
      expect(server.paths).toEqual(['/fluksio/healthz']);
    } finally {
      await server.close();
    }
  });

  test('a redirect is not followed (the token would go along) nor retried, and its target is named without credentials', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(302, { location: 'https://deploy:hunter2@elsewhere.example/healthz' }).end();
    });
    try {
      const redirected = client({ url: server.url }).health();
      await expect(redirected).rejects.toBeInstanceOf(ControlPlaneError);
      await expect(redirected).rejects.toThrow(
        /answered GET \/healthz with a redirect to https:\/\/\*\*\*@elsewhere\.example\/healthz \(302\)/,
      );
      await expect(redirected).rejects.not.toThrow(/hunter2/);
      expect(server.paths).toEqual(['/healthz']);
    } finally {
      await server.close();
    }
  });
});

/** An HTTP server answering with `handle`, and the paths it was asked for. */
async function serve(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    handle(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    paths,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
