import { generateKeyPairSync, randomBytes } from 'node:crypto';

/** What a GitHub App is configured with: its id, its private key and the webhook secret. */
export interface TestAppCredentials {
  appId: number;
  /** A freshly generated 2048-bit RSA key, PEM (PKCS#1, as GitHub hands them out). */
  privateKey: string;
  webhookSecret: string;
}

let nextAppId = 900_001;

/**
 * Credentials for a test's GitHub App: a new key pair each call, so a JWT signed with another
 * test's key is refused by this test's double.
 */
export function testAppCredentials(): TestAppCredentials {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { appId: nextAppId++, privateKey, webhookSecret: randomBytes(20).toString('hex') };
}

let shared: TestAppCredentials | undefined;

/**
 * One set of credentials per test process, for doubles started without their own: generating
 * a 2048-bit key takes about half a second on the CI machine.
 */
export function sharedTestAppCredentials(): TestAppCredentials {
  return (shared ??= testAppCredentials());
}
