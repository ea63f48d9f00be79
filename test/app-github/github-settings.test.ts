import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { readControlPlaneSettings } from '../../app/control-plane-settings.js';
import { InvalidSettingsError } from '../../app/invalid-settings-error.js';

const REQUIRED = { REDIS_URL: 'redis://127.0.0.1:6379', HOME: '/home/ml' };
const KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n';
const APP = {
  APP_ID: '12345',
  PRIVATE_KEY: KEY,
  WEBHOOK_SECRET: 's3cret',
  FLUKSIO_ALLOWED_OWNERS: 'Acme, octocat',
};

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    readControlPlaneSettings({ ...REQUIRED, ...env });
  } catch (error) {
    if (error instanceof InvalidSettingsError) return error.problems;
    throw error;
  }
  throw new Error('the settings were accepted');
}

describe('the GitHub App settings', () => {
  test('without APP_ID there is no GitHub App, and the control plane runs without it', () => {
    expect(readControlPlaneSettings(REQUIRED).github).toBeNull();
  });

  test('APP_ID with its key, secret and owners configures it, with GitHub.com and `fluksio` checks by default', () => {
    expect(readControlPlaneSettings({ ...REQUIRED, ...APP }).github).toEqual({
      appId: 12345,
      privateKey: KEY,
      webhookSecret: 's3cret',
      apiUrl: 'https://api.github.com',
      allowedOwners: ['acme', 'octocat'],
      pinnedOwners: new Map(),
      checkName: 'fluksio',
      publicUrl: 'http://localhost:3000',
      // Sign-in to the run pages needs the App's OAuth client, which is not set here.
      signIn: null,
      requestTimeoutMs: 30_000,
    });
  });

  test('GITHUB_API_URL, FLUKSIO_CHECK_NAME, FLUKSIO_PUBLIC_URL and a key with escaped newlines are read', () => {
    const github = readControlPlaneSettings({
      ...REQUIRED,
      ...APP,
      PRIVATE_KEY: KEY.replace(/\n/g, '\\n'),
      GITHUB_API_URL: 'https://ghe.example.com/api/v3/',
      FLUKSIO_CHECK_NAME: 'ml-ci',
      FLUKSIO_PUBLIC_URL: 'https://fluksio.example.com/',
    }).github;
    expect(github).toMatchObject({
      privateKey: KEY,
      apiUrl: 'https://ghe.example.com/api/v3',
      checkName: 'ml-ci',
      publicUrl: 'https://fluksio.example.com',
    });
  });

  test('PRIVATE_KEY_PATH names the key file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fluksio-key-'));
    try {
      const file = path.join(dir, 'app.pem');
      await writeFile(file, KEY);
      const { PRIVATE_KEY: _key, ...rest } = APP;
      expect(
        readControlPlaneSettings({ ...REQUIRED, ...rest, PRIVATE_KEY_PATH: file }).github?.privateKey,
      ).toBe(KEY);
      expect(problemsOf({ ...rest, PRIVATE_KEY_PATH: path.join(dir, 'missing.pem') })).toEqual([
        'PRIVATE_KEY_PATH: cannot read the file (ENOENT)',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('APP_ID without its key, secret or allowed owners names every missing variable', () => {
    expect(problemsOf({ APP_ID: '12345' })).toEqual([
      "PRIVATE_KEY: is required with APP_ID (the App's private key, or PRIVATE_KEY_PATH naming its .pem file)",
      'WEBHOOK_SECRET: is required with APP_ID (the secret GitHub signs webhook deliveries with)',
      'FLUKSIO_ALLOWED_OWNERS: is required with APP_ID (the GitHub accounts whose installations may run, e.g. acme,octocat)',
    ]);
  });

  test('an owner may be pinned to its GitHub account id: matched by the id, whatever its name', () => {
    const github = readControlPlaneSettings({
      ...REQUIRED,
      ...APP,
      FLUKSIO_ALLOWED_OWNERS: 'Acme:1234567, octocat',
    }).github;
    expect(github?.allowedOwners).toEqual(['acme', 'octocat']);
    expect(github?.pinnedOwners).toEqual(new Map([['acme', 1234567]]));
  });

  test('bad values are named with their variable', () => {
    expect(
      problemsOf({
        ...APP,
        APP_ID: 'fluksio',
        GITHUB_API_URL: 'api.github.com',
        FLUKSIO_ALLOWED_OWNERS: 'acme,not an owner',
        FLUKSIO_CHECK_NAME: 'ci (gpu)',
      }),
    ).toEqual([
      'APP_ID: "fluksio" is not a GitHub App id (a number)',
      'GITHUB_API_URL: expected a https:// or http:// URL',
      'FLUKSIO_ALLOWED_OWNERS: "not an owner" is not a GitHub account name, or one pinned to its account id (write e.g. acme:1234567,octocat)',
      'FLUKSIO_CHECK_NAME: "ci (gpu)" is not a check name (no parentheses; e.g. fluksio)',
    ]);
    expect(problemsOf({ ...APP, PRIVATE_KEY: 'not a key' })).toEqual([
      'PRIVATE_KEY: is not a PEM private key',
    ]);
  });

  test('FLUKSIO_GITHUB_TIMEOUT is a duration like every other, more than 0 and at most 10m', () => {
    const timeoutOf = (value: string) =>
      readControlPlaneSettings({ ...REQUIRED, ...APP, FLUKSIO_GITHUB_TIMEOUT: value }).github
        ?.requestTimeoutMs;
    expect(timeoutOf('45s')).toBe(45_000);
    expect(timeoutOf('500ms')).toBe(500);
    expect(timeoutOf('2m')).toBe(120_000);
    expect(problemsOf({ ...APP, FLUKSIO_GITHUB_TIMEOUT: '30' })).toEqual([
      'FLUKSIO_GITHUB_TIMEOUT: "30" is not a duration (write e.g. 90s, 30m or 6h)',
    ]);
    expect(problemsOf({ ...APP, FLUKSIO_GITHUB_TIMEOUT: '0s' })).toEqual([
      'FLUKSIO_GITHUB_TIMEOUT: must be longer than zero',
    ]);
    expect(problemsOf({ ...APP, FLUKSIO_GITHUB_TIMEOUT: '1h' })).toEqual([
      'FLUKSIO_GITHUB_TIMEOUT: must be at most 10m',
    ]);
  });

  test('GitHub variables without APP_ID are a mistake, not silently ignored', () => {
    expect(problemsOf({ WEBHOOK_SECRET: 's3cret' })).toEqual([
      "APP_ID: is required with WEBHOOK_SECRET (the GitHub App's id)",
    ]);
  });
});
