import { expect, test } from 'vitest';
import { signInKey } from '../../app/pages/page-sign-in.js';
import { SignInState } from '../../app/pages/sign-in-state.js';
import { DrivenRun, finishedStage, pageLinks, PAGES_SECRET, usePageWorld } from './page-world.js';

// Runs may come from other git hosts (an intranet host `scm`) and local paths too.
const world = usePageWorld({
  signIn: true,
  env: { FLUKSIO_CLONE_HOSTS: 'github.com,scm', FLUKSIO_ALLOW_FILE_URLS: 'true' },
});

/** A browser's cookie jar, as much of one as these tests need: name → `name=value`. */
class CookieJar {
  readonly cookies = new Map<string, string>();
  take(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const name = pair.slice(0, pair.indexOf('='));
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair);
    }
  }
  header(): string {
    return [...this.cookies.values()].join('; ');
  }
}

/** A GET or POST without following redirects, sending and keeping `jar`'s cookies. */
async function visit(url: string, jar = new CookieJar(), method = 'GET') {
  const response = await fetch(url, { method, redirect: 'manual', headers: { cookie: jar.header() } });
  jar.take(response.headers);
  return {
    status: response.status,
    location: response.headers.get('location'),
    text: await response.text(),
    headers: response.headers,
  };
}

/** Walks the whole sign-in from a page's address, as a browser would; resolves with the jar and the page's answer. */
async function signIn(login: string, path: string) {
  world.double.signInAs(login);
  const jar = new CookieJar();
  const page = await visit(`${world.plane.url}${path}`, jar);
  expect(page.status).toBe(302);
  const start = await visit(new URL(page.location!, world.plane.url).href, jar);
  expect(start.status).toBe(302);
  const authorize = new URL(start.location!);
  expect(authorize.origin).toBe(world.double.url);
  const back = await visit(authorize.href);
  expect(back.status).toBe(302);
  const callback = await visit(back.location!, jar);
  expect(callback.status).toBe(302);
  const landed = await visit(new URL(callback.location!, world.plane.url).href, jar);
  return { jar, landed, authorize, callback };
}

async function finishedRun(): Promise<DrivenRun> {
  const run = await DrivenRun.start(world.plane, { ...world });
  await run.events({ type: 'stage.finished', stage: finishedStage('train') });
  await run.finish('succeeded', { accuracy: 0.9 });
  return run;
}

const MISSING = '01JMISSINGRUN0000000000000';

test('nobody signed in is sent to sign in, for a run that exists and one that does not alike', async () => {
  const run = await finishedRun();
  const [known, unknown] = await Promise.all([
    visit(`${world.plane.url}/runs/${run.id}`),
    visit(`${world.plane.url}/runs/${MISSING}`),
  ]);
  expect(known.status).toBe(302);
  expect(known.location).toBe(`/auth/github/login?next=${encodeURIComponent(`/runs/${run.id}`)}`);
  expect(unknown.status).toBe(302);
  expect(unknown.location).toBe(`/auth/github/login?next=${encodeURIComponent(`/runs/${MISSING}`)}`);
  const [knownApi, unknownApi] = await Promise.all([
    visit(`${world.plane.url}/pages/api/runs/${run.id}`),
    visit(`${world.plane.url}/pages/api/runs/${MISSING}`),
  ]);
  expect([knownApi.status, unknownApi.status]).toEqual([401, 401]);
});

test('a user who can read the repository signs in with GitHub and lands on the run page; the cookie carries no GitHub token', async () => {
  world.double.setPermission('acme/model', 'alice', 'read');
  const run = await finishedRun();
  const { jar, landed, authorize, callback } = await signIn('alice', `/runs/${run.id}`);
  expect(authorize.pathname).toBe('/login/oauth/authorize');
  expect(authorize.searchParams.get('client_id')).toBe(world.double.oauth.clientId);
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${world.plane.url}/auth/github/callback`);
  expect(callback.location).toBe(`/runs/${run.id}`);
  expect(landed.status).toBe(200);
  expect(landed.text).toContain('Signed in as <strong>alice</strong>');

  const session = callback.headers.getSetCookie().find((line) => line.startsWith('fluksio_session='))!;
  expect(session).toMatch(/HttpOnly/i);
  expect(session).toMatch(/SameSite=Lax/i);
  const [token] = world.double.userTokens();
  expect(token?.login).toBe('alice');
  expect(jar.header()).not.toContain(token!.token);
  // Nor does Redis hold it in the clear.
  const keys = await world.plane.redis.keys(`${world.plane.settings.queuePrefix}:pages:*`);
  const values = await Promise.all(
    keys.filter((key) => key.includes(':session:')).map((key) => world.plane.redis.get(key)),
  );
  expect(values).toHaveLength(1);
  expect(values.join()).not.toContain(token!.token);

  const data = await fetch(`${world.plane.url}/pages/api/runs/${run.id}`, {
    headers: { cookie: jar.header() },
  });
  expect(data.status).toBe(200);
  expect(((await data.json()) as { report: { run: { id: string } } }).report.run.id).toBe(run.id);
});

test('a signed-in user who cannot read the repository gets exactly the answer of a missing run', async () => {
  world.double.setPermission('acme/model', 'mallory', 'none');
  const run = await finishedRun();
  const { jar, landed } = await signIn('mallory', `/runs/${run.id}`);
  const missing = await visit(`${world.plane.url}/runs/${MISSING}`, jar);
  expect(landed.status).toBe(404);
  expect(missing.status).toBe(404);
  expect(landed.text.replaceAll(run.id, 'ID')).toBe(missing.text.replaceAll(MISSING, 'ID'));
  const [api, missingApi] = await Promise.all([
    visit(`${world.plane.url}/pages/api/runs/${run.id}`, jar),
    visit(`${world.plane.url}/pages/api/runs/${MISSING}`, jar),
  ]);
  expect([api.status, missingApi.status]).toEqual([404, 404]);
  expect(api.text.replaceAll(run.id, 'ID')).toBe(missingApi.text.replaceAll(MISSING, 'ID'));
});

test("GitHub is asked about a user's access once, then the answer is kept per user and repository", async () => {
  world.double.setPermission('acme/model', 'alice', 'read');
  const run = await finishedRun();
  const { jar } = await signIn('alice', `/runs/${run.id}`);
  for (let i = 0; i < 3; i += 1)
    expect((await visit(`${world.plane.url}/pages/api/runs/${run.id}`, jar)).status).toBe(200);
  const asked = world.double.requests.filter((request) => request.operationId === 'repos/get');
  expect(asked).toHaveLength(1);
});

test('a repository not on GitHub is nobody’s to open by sign-in, even where a GitHub repository shares the start of its name', async () => {
  // Mallory owns (or can read) the GitHub repositories scm/ml and local/srv.
  world.double.addRepository({ owner: 'scm', name: 'ml' });
  world.double.addRepository({ owner: 'local', name: 'srv' });
  const elsewhere = [
    { repository: 'scm/ml/secret', cloneUrl: 'https://scm/ml/secret' },
    { repository: 'local/srv/secret', cloneUrl: 'file:///srv/secret' },
  ];
  const runIds: string[] = [];
  for (const { repository, cloneUrl } of elsewhere) {
    const token = await world.plane.addApiToken({ repositories: [repository] });
    const submitted = await world.plane.submit(token, { repository, cloneUrl });
    expect(submitted.status).toBe(201);
    runIds.push((submitted.json.run as { id: string }).id);
  }
  const { jar, landed } = await signIn('mallory', `/runs/${runIds[0]}`);
  const missing = await visit(`${world.plane.url}/runs/${MISSING}`, jar);
  expect(landed.status).toBe(404);
  expect(landed.text.replaceAll(runIds[0]!, 'ID')).toBe(missing.text.replaceAll(MISSING, 'ID'));
  for (const id of runIds) {
    expect((await visit(`${world.plane.url}/runs/${id}`, jar)).status).toBe(404);
    expect((await visit(`${world.plane.url}/pages/api/runs/${id}`, jar)).status).toBe(404);
  }
  // GitHub holds none of these repositories, so it is never asked about one.
  expect(world.double.requests.filter((request) => request.operationId === 'repos/get')).toEqual([]);
});

test('a repository not on GitHub whose name is a GitHub owner/name is not opened by who can read that GitHub repository', async () => {
  // Public GitHub repositories named as the intranet host's `scm/ml` and the path /srv are.
  world.double.addRepository({ owner: 'scm', name: 'ml' });
  world.double.addRepository({ owner: 'local', name: 'srv' });
  const elsewhere = [
    { repository: 'scm/ml', cloneUrl: 'https://scm/ml' },
    { repository: 'local/srv', cloneUrl: 'file:///srv' },
  ];
  const runIds: string[] = [];
  for (const { repository, cloneUrl } of elsewhere) {
    const token = await world.plane.addApiToken({ repositories: [repository] });
    const submitted = await world.plane.submit(token, { repository, cloneUrl });
    expect(submitted.status).toBe(201);
    runIds.push((submitted.json.run as { id: string }).id);
  }
  const { jar, landed } = await signIn('mallory', `/runs/${runIds[0]}`);
  const missing = await visit(`${world.plane.url}/runs/${MISSING}`, jar);
  expect(landed.status).toBe(404);
  expect(landed.text.replaceAll(runIds[0]!, 'ID')).toBe(missing.text.replaceAll(MISSING, 'ID'));
  for (const id of runIds) {
    expect((await visit(`${world.plane.url}/runs/${id}`, jar)).status).toBe(404);
    expect((await visit(`${world.plane.url}/pages/api/runs/${id}`, jar)).status).toBe(404);
  }
  for (const { repository } of elsewhere) {
    const list = await visit(`${world.plane.url}/pages/api/runs?repo=${encodeURIComponent(repository)}`, jar);
    expect(list.status).toBe(404);
  }
  // What GitHub says about its own repositories of those names decides nothing here.
  expect(world.double.requests.filter((request) => request.operationId === 'repos/get')).toEqual([]);
  // A GitHub repository is still GitHub's to open.
  world.double.setPermission('acme/model', 'mallory', 'read');
  const run = await finishedRun();
  expect((await visit(`${world.plane.url}/runs/${run.id}`, jar)).status).toBe(200);
});

test('a forged state, an expired one, and a state from another browser are refused, and nobody is signed in', async () => {
  world.double.setPermission('acme/model', 'alice', 'read');
  world.double.signInAs('alice');
  const run = await finishedRun();
  const jar = new CookieJar();
  const start = await visit(
    `${world.plane.url}/auth/github/login?next=${encodeURIComponent(`/runs/${run.id}`)}`,
    jar,
  );
  const state = new URL(start.location!).searchParams.get('state')!;
  const back = async (withState: string, cookies: CookieJar) => {
    const authorize = new URL(start.location!);
    authorize.searchParams.set('state', withState);
    const callback = await visit((await visit(authorize.href)).location!, cookies);
    return { ...callback, session: callback.headers.getSetCookie().join().includes('fluksio_session=') };
  };
  const [body, signature] = state.split('.') as [string, string];
  const forgedNext = Buffer.from(
    JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), next: '/runs/OTHER' }),
  ).toString('base64url');
  const forged = await back(`${forgedNext}.${signature}`, jar);
  expect([forged.status, forged.session]).toEqual([403, false]);
  expect(forged.text).toContain('not valid');

  const nonce = jar.cookies.get('fluksio_sign_in')!.split('=')[1]!.split('.')[0]!;
  const stale = new SignInState(signInKey(Buffer.from(PAGES_SECRET), 'sign-in state')).issue(
    `/runs/${run.id}`,
    Date.now() - 11 * 60_000,
    nonce,
  );
  const expired = await back(stale.state, jar);
  expect([expired.status, expired.session]).toEqual([403, false]);
  expect(expired.text).toContain('took too long');

  const elsewhere = await back(state, new CookieJar());
  expect([elsewhere.status, elsewhere.session]).toEqual([403, false]);

  // The genuine state in its own browser is let in.
  const genuine = await back(state, jar);
  expect([genuine.status, genuine.session, genuine.location]).toEqual([302, true, `/runs/${run.id}`]);
});

test('a sign-in only returns to a path on this server', async () => {
  for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'runs/x'])
    expect(
      (await visit(`${world.plane.url}/auth/github/login?next=${encodeURIComponent(next)}`)).status,
    ).toBe(400);
});

test('a return path whose dot segments resolve to another host (/.//evil.example) is refused, not followed after sign-in', async () => {
  // The URL parser folds `.`/`..` segments (spelt plainly or as %2e), so each of these
  // paths became `//evil.example…`: a Location header a browser follows to evil.example.
  for (const next of [
    '/.//evil.example/x',
    '/runs/..//evil.example',
    '/%2e%2e//evil.example',
    '/./%2e//evil.example',
  ])
    expect(
      (await visit(`${world.plane.url}/auth/github/login?next=${encodeURIComponent(next)}`)).status,
      next,
    ).toBe(400);
  // A path with dot segments that stays on this server is still returned to, folded.
  world.double.setPermission('acme/model', 'alice', 'read');
  world.double.signInAs('alice');
  const run = await finishedRun();
  const jar = new CookieJar();
  const start = await visit(
    `${world.plane.url}/auth/github/login?next=${encodeURIComponent(`/runs/x/../${run.id}`)}`,
    jar,
  );
  expect(start.status).toBe(302);
  const callback = await visit((await visit(start.location!)).location!, jar);
  expect([callback.status, callback.location]).toEqual([302, `/runs/${run.id}`]);
});

test('a tampered session cookie is refused as no session at all', async () => {
  world.double.setPermission('acme/model', 'alice', 'read');
  const run = await finishedRun();
  const { jar } = await signIn('alice', `/runs/${run.id}`);
  const cookie = jar.cookies.get('fluksio_session')!;
  const value = cookie.slice('fluksio_session='.length);
  const flipped = (text: string, at: number) =>
    `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
  for (const tampered of [flipped(value, 3), flipped(value, value.length - 3), value.split('.')[0]!]) {
    const forged = new CookieJar();
    forged.cookies.set('fluksio_session', `fluksio_session=${tampered}`);
    const answer = await visit(`${world.plane.url}/runs/${run.id}`, forged);
    expect(answer.status).toBe(302);
    expect(answer.location).toMatch(/^\/auth\/github\/login/);
  }
  expect((await visit(`${world.plane.url}/runs/${run.id}`, jar)).status).toBe(200);
});

test('signing out ends the session on the server, not only in the browser', async () => {
  world.double.setPermission('acme/model', 'alice', 'read');
  const run = await finishedRun();
  const { jar } = await signIn('alice', `/runs/${run.id}`);
  const kept = jar.header();
  const out = await visit(`${world.plane.url}/auth/signout`, jar, 'POST');
  expect(out.status).toBe(200);
  expect(jar.cookies.has('fluksio_session')).toBe(false);
  const replayed = await fetch(`${world.plane.url}/runs/${run.id}`, {
    redirect: 'manual',
    headers: { cookie: kept },
  });
  expect(replayed.status).toBe(302);
});

test('with sign-in on, signed links and API tokens still open the pages', async () => {
  const run = await finishedRun();
  expect((await visit(`${world.plane.url}/runs/${run.id}?${pageLinks.sign('acme/model')}`)).status).toBe(200);
  const api = await world.plane.call('GET', `/pages/api/runs/${run.id}`, { token: world.submitter });
  expect(api.status).toBe(200);
});

test('in Chromium: an anonymous visitor to a private run is sent through GitHub sign-in, comes back signed in to the page; a user without access gets 404', async () => {
  world.double.setPermission('acme/model', 'alice', 'read');
  world.double.setPermission('acme/model', 'mallory', 'none');
  const run = await finishedRun();
  const runPage = `${world.plane.url}/runs/${run.id}`;

  world.double.signInAs('alice');
  const { page } = world;
  const visited: string[] = [];
  page.on('request', (request) => {
    if (request.isNavigationRequest()) visited.push(new URL(request.url()).pathname);
  });
  const answer = await page.goto(runPage);
  expect(answer?.status()).toBe(200);
  expect(page.url()).toBe(runPage);
  expect(visited).toEqual([
    `/runs/${run.id}`,
    '/auth/github/login',
    '/login/oauth/authorize',
    '/auth/github/callback',
    `/runs/${run.id}`,
  ]);
  expect(await page.locator('.account strong').textContent()).toBe('alice');
  await page.locator('main[data-final="true"]').waitFor();
  expect(await page.locator('#run-status').textContent()).toBe('succeeded');
  // Signed in, the page's data and a reload need GitHub no more.
  const authorizations = world.double.userTokens().length;
  expect((await page.reload())?.status()).toBe(200);
  expect(world.double.userTokens()).toHaveLength(authorizations);
  await world.browser.screenshot(page, 'signed-in-run-page');

  world.double.signInAs('mallory');
  const other = await world.browser.newPage();
  try {
    const refused = await other.goto(runPage);
    expect(refused?.status()).toBe(404);
    expect(other.url()).toBe(runPage);
    expect(await other.locator('h1').textContent()).toBe('Not found');
    expect(await other.content()).not.toContain('succeeded');
  } finally {
    await other.close();
  }
});
