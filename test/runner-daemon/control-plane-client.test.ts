import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import {
  ControlPlaneError,
  ControlPlaneUnreachableError,
  StaleLeaseError,
  UnauthorizedError,
} from '../../client/control-plane-errors.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { makeClaim } from './helpers/make-claim.js';

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
});
