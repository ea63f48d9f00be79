import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A self-signed certificate for `127.0.0.1` and `localhost`, PEM, and its private key. */
export interface LocalhostCertificate {
  key: string;
  cert: string;
}

let shared: LocalhostCertificate | undefined;

/**
 * One certificate per test process, kept in memory: made with the `openssl` command (Node cannot
 * make certificates), valid for two days, with a P-256 key (milliseconds to make).
 */
export function localhostCertificate(): LocalhostCertificate {
  if (shared) return shared;
  const dir = mkdtempSync(path.join(tmpdir(), 'fluksio-double-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
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
        certFile,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    shared = { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
    return shared;
  } catch (error) {
    throw new Error(`Could not make the GitHub double's TLS certificate with openssl: ${String(error)}`, {
      cause: error,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
