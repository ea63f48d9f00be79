import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { eq } from 'drizzle-orm';
import { apiTokens } from '../../schemas/tables/api-tokens.js';
import { runs } from '../../schemas/tables/runs.js';
import { revokeApiToken } from '../../store/tokens/revoke-api-token.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import {
  COMMIT,
  resetTables,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.js';

let database: TestDatabase;
let plane: TestControlPlane;
let submitter: string;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  plane = await startTestControlPlane({ db: database.db });
  submitter = await plane.addApiToken({ name: 'ci', repositories: ['acme/model'] });
});
afterEach(async () => {
  await plane.close();
});

async function runCount(): Promise<number> {
  return (await database.db.select({ id: runs.id }).from(runs)).length;
}

describe('POST /api/v1/runs', () => {
  test('queues a run and answers its report', async () => {
    const answer = await plane.submit(submitter, { params: { lr: 0.1 }, labels: ['gpu'], noCache: true });
    expect(answer.status).toBe(201);
    const report = RemoteRunReport.parse(answer.json);
    expect(report).toMatchObject({
      run: { status: 'queued', commit: COMMIT, params: { lr: 0.1 }, pipelinePath: 'fluksio.yml' },
      repository: 'acme/model',
      attempt: 1,
      labels: ['gpu'],
      runner: null,
    });
    const [row] = await database.db.select().from(runs);
    expect(row).toMatchObject({
      submittedBy: 'ci',
      noCache: true,
      cloneUrl: 'https://github.com/acme/model.git',
    });
  });

  test('a run no online runner can take says what it waits for', async () => {
    const waiting = await plane.submit(submitter, { labels: ['gpu'] });
    expect(waiting.json).toMatchObject({ run: { reason: 'Waiting for a runner labelled gpu' } });
    const { token } = await plane.addRunner({ name: 'gpu-box', labels: ['gpu'] });
    expect(await plane.claim(token)).not.toBeNull();
    const taken = await plane.submit(submitter, { labels: ['gpu'] });
    expect(taken.json).toMatchObject({ run: { reason: 'Queued' } });
  });

  test('the same Idempotency-Key twice makes one run: 201, then 200 with the same run', async () => {
    const first = await plane.submit(submitter, { params: { lr: 0.1 } }, 'retry-me');
    const second = await plane.submit(submitter, { params: { lr: 0.1 } }, 'retry-me');
    expect([first.status, second.status]).toEqual([201, 200]);
    expect((second.json.run as { id: string }).id).toBe((first.json.run as { id: string }).id);
    expect(await runCount()).toBe(1);
    const other = await plane.submit(submitter, { params: { lr: 0.1 } }, 'another-key');
    expect(other.status).toBe(201);
    expect(await runCount()).toBe(2);
  });

  test('an Idempotency-Key is required', async () => {
    const answer = await plane.call('POST', '/api/v1/runs', {
      token: submitter,
      json: { repository: 'acme/model', commit: COMMIT },
    });
    expect(answer).toMatchObject({ status: 400, json: { field: 'Idempotency-Key' } });
    expect(await runCount()).toBe(0);
  });

  test.each([
    ['ext::sh -c touch% /tmp/pwned', /remote-helper/],
    ['--upload-pack=touch /tmp/pwned', /must not start with "-"/],
    ['-oProxyCommand=calc', /must not start with "-"/],
    ['https://evil.example/acme/model.git', /not on this control plane's allow-list/],
    ['https://user:hunter2@github.com/acme/model.git', /credentials/],
    ['http://github.com/acme/model.git', /scheme "http"/],
    ['ssh://git@github.com/acme/model.git', /credentials|scheme "ssh"/],
    ['git://github.com/acme/model.git', /scheme "git"/],
    ['https://github.com/acme/model.git?upload-pack=x', /query/],
    ['not a url', /spaces/],
  ])('cloneUrl %s is refused with 400 naming cloneUrl, and makes no run', async (cloneUrl, message) => {
    const answer = await plane.submit(submitter, { cloneUrl });
    expect(answer.status).toBe(400);
    expect(answer.json.field).toBe('cloneUrl');
    expect(answer.json.error).toMatch(message);
    expect(answer.json.error).not.toContain('hunter2');
    expect(await runCount()).toBe(0);
  });

  test('a file:// cloneUrl names the repository local/<path>, and only when allowed', async () => {
    const token = await plane.addApiToken({ repositories: ['local/srv/repos/model.git'] });
    const answer = await plane.submit(token, {
      repository: 'local/srv/repos/model.git',
      cloneUrl: 'file:///srv/repos/model.git',
    });
    expect(answer.status).toBe(201);
    const [row] = await database.db.select().from(runs);
    expect(row?.cloneUrl).toBe('file:///srv/repos/model.git');

    await plane.close();
    plane = await startTestControlPlane({ db: database.db, env: { FLUKSIO_ALLOW_FILE_URLS: 'false' } });
    const refused = await plane.submit(token, {
      repository: 'local/srv/repos/model.git',
      cloneUrl: 'file:///srv/repos/model.git',
    });
    expect(refused).toMatchObject({ status: 400, json: { field: 'cloneUrl' } });
  });

  test('a cloneUrl on an allowed host names host/path, which must be the repository submitted', async () => {
    await plane.close();
    plane = await startTestControlPlane({
      db: database.db,
      env: { FLUKSIO_CLONE_HOSTS: 'github.com,git.example.com' },
    });
    const token = await plane.addApiToken({ repositories: ['git.example.com/ml/model'] });
    const mismatch = await plane.submit(token, {
      repository: 'acme/model',
      cloneUrl: 'https://git.example.com/ml/model.git',
    });
    expect(mismatch).toMatchObject({ status: 400, json: { field: 'repository' } });
    const answer = await plane.submit(token, {
      repository: 'git.example.com/ml/model',
      cloneUrl: 'https://git.example.com/ml/model.git',
    });
    expect(answer.status).toBe(201);
  });

  test('a repository the token is not scoped to is 403, and makes no run', async () => {
    const answer = await plane.submit(submitter, { repository: 'acme/other' });
    expect(answer).toMatchObject({ status: 403, json: { field: 'repository' } });
    expect(await runCount()).toBe(0);
  });

  test("a group id that holds another repository's runs is 409, and makes no run", async () => {
    const other = await plane.addApiToken({ name: 'other', repositories: ['acme/other'] });
    const group = { id: 'group-sweep-1', index: 0 };
    expect((await plane.submit(submitter, { group })).status).toBe(201);
    const answer = await plane.submit(other, { repository: 'acme/other', group: { ...group, index: 1 } });
    expect(answer).toMatchObject({ status: 409, json: { field: 'group.id' } });
    expect(await runCount()).toBe(1);
    // The group's own repository may go on adding to it.
    expect((await plane.submit(submitter, { group: { ...group, index: 1 } })).status).toBe(201);
  });

  test('a read token cannot submit (403); an unknown token is 401', async () => {
    const reader = await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' });
    expect((await plane.submit(reader, {})).status).toBe(403);
    expect((await plane.submit('nope', {})).status).toBe(401);
    const runner = await plane.addRunner({ name: 'box' });
    expect((await plane.submit(runner.token, {})).status).toBe(401);
    expect(await runCount()).toBe(0);
  });

  test('a token revoked after it queued runs queues no more, and its retry of one is 401, not that run', async () => {
    expect((await plane.submit(submitter, {}, 'before-revoke')).status).toBe(201);
    expect(await revokeApiToken({ db: database.db, name: 'ci' })).toBe(true);
    expect(await plane.submit(submitter, {})).toMatchObject({
      status: 401,
      json: { field: 'Authorization' },
    });
    expect(await plane.submit(submitter, {}, 'before-revoke')).toMatchObject({ status: 401 });
    expect(await runCount()).toBe(1);
  });

  test('a token narrowed after it queued runs is 403 for the repository it lost, and makes no run', async () => {
    expect((await plane.submit(submitter, {})).status).toBe(201);
    await database.db
      .update(apiTokens)
      .set({ repositories: ['acme/other'] })
      .where(eq(apiTokens.name, 'ci'));
    expect(await plane.submit(submitter, {})).toMatchObject({ status: 403, json: { field: 'repository' } });
    expect(await runCount()).toBe(1);
  });

  test('a malformed body is 400 naming the field', async () => {
    const answer = await plane.submit(submitter, { commit: 'HEAD' });
    expect(answer).toMatchObject({ status: 400, json: { field: 'commit' } });
    const unknown = await plane.submit(submitter, { priority: 'high' });
    expect(unknown).toMatchObject({ status: 400, json: { field: 'priority' } });
  });
});

describe('reading and cancelling runs', () => {
  test("a run of a repository the token does not reach reads as unknown (404), like a run that doesn't exist", async () => {
    const elsewhere = await plane.addApiToken({ repositories: ['acme/other'] });
    const submitted = await plane.submit(submitter, {});
    const id = (submitted.json.run as { id: string }).id;
    expect((await plane.call('GET', `/api/v1/runs/${id}`, { token: submitter })).status).toBe(200);
    for (const path of [
      `/api/v1/runs/${id}`,
      `/api/v1/runs/${id}/metrics`,
      `/api/v1/runs/${id}/logs/train`,
    ]) {
      expect((await plane.call('GET', path, { token: elsewhere })).status, path).toBe(404);
    }
    expect(
      (await plane.call('POST', `/api/v1/runs/${id}/cancel`, { token: elsewhere, json: {} })).status,
    ).toBe(404);
    expect(
      (await plane.call('GET', '/api/v1/runs/01J0000000000000000000000', { token: submitter })).status,
    ).toBe(404);
  });

  test('where to look for the baseline is a list of full SHAs; anything else is 400 naming it', async () => {
    const id = ((await plane.submit(submitter, {})).json.run as { id: string }).id;
    const read = (query: string) => plane.call('GET', `/api/v1/runs/${id}${query}`, { token: submitter });
    const none = await read(`?baseline-commits=${'0'.repeat(40)},${'1'.repeat(40)}`);
    expect(none).toMatchObject({ status: 200, json: { baseline: null } });
    for (const query of [
      '?baseline-commits=main',
      `?baseline-commits=${'0'.repeat(40)},`,
      '?baseline-commits=',
    ]) {
      expect(await read(query), query).toMatchObject({
        status: 400,
        json: { field: expect.stringMatching(/^baseline-commits/) as unknown },
      });
    }
  });

  test('a read token reads but cannot cancel', async () => {
    const reader = await plane.addApiToken({ repositories: ['acme/model'], scope: 'read' });
    const id = ((await plane.submit(submitter, {})).json.run as { id: string }).id;
    expect((await plane.call('GET', `/api/v1/runs/${id}`, { token: reader })).status).toBe(200);
    expect((await plane.call('POST', `/api/v1/runs/${id}/cancel`, { token: reader, json: {} })).status).toBe(
      403,
    );
  });

  test('cancelling a queued run finishes it at once', async () => {
    const id = ((await plane.submit(submitter, {})).json.run as { id: string }).id;
    const answer = await plane.call('POST', `/api/v1/runs/${id}/cancel`, { token: submitter });
    expect(answer).toMatchObject({ status: 200, json: { run: { status: 'cancelled' } } });
  });

  test('the log of a stage the run does not have is 404 naming the stage', async () => {
    const id = ((await plane.submit(submitter, {})).json.run as { id: string }).id;
    const answer = await plane.call('GET', `/api/v1/runs/${id}/logs/train`, { token: submitter });
    expect(answer).toMatchObject({ status: 404, json: { field: 'stage' } });
  });

  test('an unknown endpoint is a JSON 404', async () => {
    const answer = await plane.call('GET', '/api/v1/nothing');
    expect(answer).toMatchObject({
      status: 404,
      json: { error: expect.stringContaining('/api/v1/nothing') },
    });
  });
});
