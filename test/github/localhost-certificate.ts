import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A self-signed certificate for `127.0.0.1` and `localhost`, and the file git trusts it from. */
export interface LocalhostCertificate {
  /** The private key, PEM; only in memory. */
  key: string;
  /** The certificate, PEM. */
  cert: string;
  /** The certificate as a file, for `GIT_SSL_CAINFO` (or `NODE_EXTRA_CA_CERTS`). */
  caFile: string;
}

let shared: LocalhostCertificate | undefined;

/**
 * One certificate per test process (made with the `openssl` command, which Node cannot do
 * itself), valid for two days, removed from disk when the process exits. A P-256 key: making
 * one takes milliseconds.
 */
export function localhostCertificate(): LocalhostCertificate {
  if (shared) return shared;
  const dir = mkdtempSync(path.join(tmpdir(), 'fluksio-double-tls-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const keyFile = path.join(dir, 'key.pem');
  const caFile = path.join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=fluksio GitHub double',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        keyFile,
        '-out',
        caFile,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (error) {
    throw new Error(`Could not make the GitHub double's TLS certificate with openssl: ${String(error)}`, {
      cause: error,
    });
  }
  const key = readFileSync(keyFile, 'utf8');
  rmSync(keyFile);
  shared = { key, cert: readFileSync(caFile, 'utf8'), caFile };
  return shared;
}
