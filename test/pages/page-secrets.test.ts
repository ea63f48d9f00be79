import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { afterEach, expect, test } from 'vitest';
import { localSecretGate } from '../../app/pages/local-secret-gate.js';
import { loggableUrl } from '../../app/quiet-request-logs.js';
import { openBrowser } from '../../cli/ui/open-browser.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const asked = (query: Record<string, unknown>) => ({ query }) as unknown as FastifyRequest;

test('the local secret admits only itself; a token of another length or alphabet is a plain 403', async () => {
  const gate = localSecretGate('s3cret-token-value');
  expect(await gate.admit(asked({ token: 's3cret-token-value' }), 'local/x')).toBe('allowed');
  for (const token of [
    undefined,
    '',
    's3cret',
    'ß3cret-token-valu',
    's3cret-token-value!',
    ['s3cret-token-value'],
  ])
    expect(await gate.admit(asked({ token }), 'local/x')).toBe('forbidden');
});

test("a request's logged URL carries no signature and no secret", () => {
  expect(loggableUrl('/runs/01ABC?exp=123&sig=SECRET')).toBe('/runs/01ABC?exp=123&sig=%5Bredacted%5D');
  expect(loggableUrl('/?token=SECRET&x=1')).not.toContain('SECRET');
  expect(loggableUrl('/runs/01ABC')).toBe('/runs/01ABC');
});

test('the browser is handed a file only this user can read, never the URL with its secret', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fluksio-browser-'));
  dirs.push(dir);
  const record = join(dir, 'argv');
  const browser = join(dir, 'browser.sh');
  await writeFile(
    browser,
    `#!/bin/sh\nprintf '%s' "$*" > '${record}.tmp' && mv '${record}.tmp' '${record}'\n`,
  );
  await chmod(browser, 0o755);
  expect(await openBrowser('http://127.0.0.1:4000/?token=SECRET&a=1', { BROWSER: browser })).toBe(true);
  let argv = '';
  for (let tries = 0; argv === '' && tries < 600; tries += 1) {
    argv = await readFile(record, 'utf8').catch(() => '');
    if (argv === '') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(argv).not.toContain('SECRET');
  dirs.push(join(argv, '..'));
  expect((await stat(argv)).mode & 0o777).toBe(0o600);
  expect(await readFile(argv, 'utf8')).toContain('http://127.0.0.1:4000/?token=SECRET&amp;a=1');
});
