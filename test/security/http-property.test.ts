import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Claim } from '../../schemas/protocol/claim.js';
import { startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ranAsClaimed } from '../helpers/ran-as-claimed.js';

// Acceptance 3 of issue 9: generated bodies, headers and paths for every route,
// hostile and near-valid, against the HTTP API over real HTTP. The control plane never
// answers 5xx, every refusal is a JSON sentence, and it is healthy afterwards.

/**
 * Requests per property run, sent at once, and runs per route: 10 × 100 = 1,000 generated
 * requests per route (about 20,000 in all). FLUKSIO_PROPERTY_RUNS=1000 explores ten times
 * deeper; a smaller number is quicker when working on the routes.
 */
const BURST = 10;
const RUNS = Number(process.env.FLUKSIO_PROPERTY_RUNS ?? 100);
/** Room for a loaded 2-core machine: each property sends its requests one burst at a time. */
const PROPERTY_TIMEOUT_MS = 300_000;

let database: TestDatabase;
let plane: TestControlPlane;
let runnerToken: string;
let apiToken: string;
let claim: Claim;
let runId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  plane = await startTestControlPlane({ db: database.db });
  ({ token: runnerToken } = await plane.addRunner({ name: 'box', labels: ['gpu'] }));
  apiToken = await plane.addApiToken({ repositories: ['acme/model'] });
  const submitted = await plane.submit(apiToken, { labels: ['gpu'] });
  runId = (submitted.json.run as { id: string }).id;
  const claimed = await plane.claim(runnerToken);
  if (!claimed) throw new Error('the run was not claimed');
  claim = claimed;
}, 60_000);
afterAll(async () => {
  await plane?.close();
  await database?.close();
});

/** Text no field should choke on: NUL, lone surrogates, SQL, dates that are none, huge. */
const hostileText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00y',
    "'; drop table runs; --",
    '0000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.000Z',
    'yesterday',
    '../../etc/passwd',
    '%00',
    '__proto__',
    'x'.repeat(5000),
  ),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 63, 1e308, -1e308),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  hostileNumber,
  fc.constantFrom(null, true, false, [], {}),
  fc.jsonValue({ maxDepth: 2 }),
);
/** The valid value most of the time, else anything. */
const field = <T>(valid: T): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(valid) }, { weight: 2, arbitrary: hostileValue });
/** A record of near-valid fields, sometimes with one more key than the schema knows. */
const body = (fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record(fields, { requiredKeys: [] }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.record(fields), hostileText, hostileValue)
        .map(([record, key, value]) => ({ ...record, [key]: value })),
    },
    { weight: 1, arbitrary: hostileValue },
  );

const isoNow = new Date().toISOString();
const digest = 'c'.repeat(64);
const event = fc.oneof(
  fc.record({ type: fc.constant('stage.started'), stage: field('train'), at: field(isoNow), seq: field(0) }),
  fc.record({
    type: fc.constant('stage.log'),
    stage: field('train'),
    lines: fc.oneof(fc.array(hostileText, { maxLength: 4 }), hostileValue),
    seq: field(1),
  }),
  fc.record({
    type: fc.constant('metric.points'),
    points: fc.array(
      fc.record({ stage: field('train'), name: field('loss'), step: field(0), value: field(0.5) }),
      { maxLength: 3 },
    ),
    seq: field(2),
  }),
  fc.record({
    type: fc.constant('annotation'),
    annotation: fc.record({
      stage: field('train'),
      path: field('train.py'),
      line: field(3),
      level: field('error'),
      message: field('boom'),
      title: field(null),
    }),
    seq: field(3),
  }),
  fc.record({
    type: fc.constant('stage.finished'),
    stage: fc.record({
      name: field('train'),
      status: field('ran'),
      cacheKey: field(null),
      keyInputs: field(null),
      cachedFrom: field(null),
      reasons: field([]),
      startedAt: field(isoNow),
      finishedAt: field(isoNow),
      durationMs: field(10),
      exitCode: field(0),
      outs: field([]),
      metrics: fc.oneof(fc.dictionary(hostileText, hostileNumber, { maxKeys: 3 }), hostileValue),
      logTail: field(''),
      logDigest: field(null),
      error: field(null),
    }),
    seq: field(4),
  }),
);

interface Route {
  method: string;
  /** The path, given the run id the request names. */
  path: (id: string) => string;
  /** Which credential a well-formed request carries. */
  credential: 'runner' | 'api' | 'none';
  body?: () => fc.Arbitrary<unknown>;
  headers?: () => fc.Arbitrary<Record<string, string>>;
}

const lease = () => field(claim.lease);
const leaseHeaders = () =>
  fc.record(
    {
      'x-fluksio-lease': fc.oneof(fc.constant(claim.lease), fc.string({ maxLength: 70 })),
      'x-fluksio-run': fc.oneof(fc.constant(runId), fc.string({ maxLength: 70 })),
    },
    { requiredKeys: [] },
  );

const ROUTES: Route[] = [
  {
    method: 'POST',
    path: () => '/api/v1/runner/claim',
    credential: 'runner',
    // Always a wait the claim refuses or 0 s: a claim without one long-polls for 30 s.
    body: () =>
      fc.record({
        waitSeconds: fc.constantFrom(0, -1, 0.5, 61, '0', null, 1e308, '\u0000'),
        acceptForks: field(false),
      }),
  },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/heartbeat`,
    credential: 'runner',
    body: () => body({ lease: lease() }),
  },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/start`,
    credential: 'runner',
    body: () =>
      body({
        lease: lease(),
        codeDigest: field(digest),
        envDigest: field(digest),
        params: field(ranAsClaimed(claim).params),
        paramsDigest: field(ranAsClaimed(claim).paramsDigest),
      }),
  },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/events`,
    credential: 'runner',
    body: () =>
      body({
        lease: lease(),
        attempt: field(1),
        events: fc.oneof(fc.array(event, { maxLength: 5 }), hostileValue),
      }),
  },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/finish`,
    credential: 'runner',
    body: () =>
      body({
        lease: lease(),
        status: field('failed'),
        reason: field('why'),
        metrics: fc.oneof(fc.dictionary(hostileText, hostileNumber, { maxKeys: 3 }), hostileValue),
      }),
  },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/release`,
    credential: 'runner',
    body: () => body({ lease: lease(), reason: field('stopping') }),
  },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/fetched`,
    credential: 'runner',
    body: () => body({ lease: lease(), extraHeader: field('AUTHORIZATION: basic eA==') }),
  },
  {
    method: 'GET',
    path: (id) => `/api/v1/runs/${id}/cache/${digest}`,
    credential: 'runner',
    headers: leaseHeaders,
  },
  {
    method: 'GET',
    path: (id) => `/api/v1/runs/${id}/cache?stage=train`,
    credential: 'runner',
    headers: leaseHeaders,
  },
  {
    method: 'HEAD',
    path: () => `/api/v1/blobs/sha256:${digest}`,
    credential: 'runner',
    headers: leaseHeaders,
  },
  { method: 'GET', path: (id) => `/api/v1/blobs/sha256:${digest}?run=${id}`, credential: 'api' },
  {
    method: 'PUT',
    path: () => `/api/v1/blobs/sha256:${digest}`,
    credential: 'runner',
    headers: leaseHeaders,
    body: () => hostileText,
  },
  {
    method: 'POST',
    path: () => '/api/v1/runs',
    credential: 'api',
    headers: () =>
      fc.record({ 'idempotency-key': fc.string({ minLength: 1, maxLength: 30 }) }, { requiredKeys: [] }),
    body: () =>
      body({
        repository: field('acme/model'),
        commit: field('a'.repeat(40)),
        cloneUrl: field('https://github.com/acme/model.git'),
        pipelinePath: field('fluksio.yml'),
        params: fc.oneof(
          fc.dictionary(hostileText, fc.oneof(hostileText, hostileNumber), { maxKeys: 3 }),
          hostileValue,
        ),
        labels: field(['nobody']),
        noCache: field(false),
        retries: field(0),
        timeoutMs: field(60_000),
        group: field({ id: 'g', index: 0 }),
      }),
  },
  { method: 'GET', path: (id) => `/api/v1/runs/${id}`, credential: 'api' },
  { method: 'GET', path: (id) => `/api/v1/runs/${id}/metrics`, credential: 'api' },
  { method: 'GET', path: (id) => `/api/v1/runs/${id}/logs/train`, credential: 'api' },
  {
    method: 'POST',
    path: (id) => `/api/v1/runs/${id}/cancel`,
    credential: 'api',
    body: () => body({ reason: field('enough') }),
  },
  { method: 'GET', path: () => '/metrics', credential: 'none' },
];

/** Text percent-escaped byte by byte, as it would travel in a path (a lone surrogate as U+FFFD). */
function escapePath(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
}

/** A run id as a caller may write it in a path: the real one, or anything, escaped or not. */
const pathId = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: hostileText.map(escapePath) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('%00', '%ED%A0%80', '%', '%zz', '..', '.', 'a/b', 'x'.repeat(300)),
  },
);

/** One generated request to a route: which token, which headers, which bytes. */
function requestOf(route: Route): fc.Arbitrary<{ path: string; init: RequestInit }> {
  return fc
    .record({
      id: pathId,
      token: fc.oneof(
        { weight: 4, arbitrary: fc.constant('right') },
        { weight: 1, arbitrary: fc.constantFrom('other', 'none', 'garbage') },
      ),
      headers: route.headers?.() ?? fc.constant({}),
      contentType: fc.oneof(
        { weight: 5, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: fc.constantFrom('text/plain', 'application/octet-stream', 'x/\u00e9', '') },
      ),
      payload: route.body?.() ?? fc.constant(undefined),
      encoding: fc.oneof(
        { weight: 6, arbitrary: fc.constant('json' as const) },
        { weight: 1, arbitrary: fc.constantFrom('truncated' as const, 'raw' as const) },
      ),
    })
    .map(({ id, token, headers, contentType, payload, encoding }) => {
      const credential =
        token === 'right'
          ? route.credential === 'api'
            ? apiToken
            : runnerToken
          : token === 'other'
            ? route.credential === 'api'
              ? runnerToken
              : apiToken
            : token === 'garbage'
              ? 'Bearer \u00ff\u00fe'
              : '';
      const all: Record<string, string> = { ...headers };
      if (credential !== '') all.authorization = token === 'garbage' ? credential : `Bearer ${credential}`;
      let bytes: string | undefined;
      if (payload !== undefined && route.method !== 'GET' && route.method !== 'HEAD') {
        const json = JSON.stringify(payload) ?? 'null';
        bytes =
          encoding === 'json'
            ? json
            : encoding === 'truncated'
              ? json.slice(0, -1)
              : typeof payload === 'string'
                ? payload
                : `${json}]`;
        if (contentType !== '') all['content-type'] = contentType;
      }
      return {
        path: route.path(id ?? runId),
        init: { method: route.method, headers: all, ...(bytes === undefined ? {} : { body: bytes }) },
      };
    });
}

describe('the HTTP API under generated requests', () => {
  test.each(ROUTES.map((route) => [`${route.method} ${route.path(':id')}`, route] as const))(
    '%s never answers 5xx',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(requestOf(route), { minLength: BURST, maxLength: BURST }),
          async (requests) => {
            const answers = await Promise.all(
              requests.map(async ({ path, init }) => {
                const response = await fetch(`${plane.url}${path}`, init);
                return { path, status: response.status, text: await response.text() };
              }),
            );
            for (const answer of answers) {
              expect(answer.status, `${route.method} ${answer.path}: ${answer.text}`).toBeLessThan(500);
              if (answer.status >= 400 && route.method !== 'HEAD') {
                expect(JSON.parse(answer.text)).toMatchObject({ error: expect.any(String) });
              }
            }
          },
        ),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  test(
    'any path, method and header answers 404 or a refusal, never 5xx',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
              path: fc.oneof(
                fc.webPath(),
                fc
                  .array(hostileText.map(escapePath), { maxLength: 4 })
                  .map((parts) => `/api/v1/${parts.join('/')}`),
              ),
            }),
            { minLength: BURST, maxLength: BURST },
          ),
          async (requests) => {
            const statuses = await Promise.all(
              requests.map(async ({ method, path }) => {
                const response = await fetch(`${plane.url}${path.startsWith('/') ? path : `/${path}`}`, {
                  method,
                  headers: { authorization: `Bearer ${runnerToken}` },
                });
                await response.arrayBuffer();
                return { status: response.status, what: `${method} ${path}` };
              }),
            );
            for (const { status, what } of statuses) expect(status, what).toBeLessThan(500);
          },
        ),
        { numRuns: RUNS },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  test('the control plane is healthy afterwards and its run intact', async () => {
    expect((await plane.call('GET', '/healthz')).status).toBe(200);
    expect((await plane.call('GET', '/readyz')).status).toBe(200);
    const report = await plane.call('GET', `/api/v1/runs/${runId}`, { token: apiToken });
    expect(report.status).toBe(200);
  });
});
