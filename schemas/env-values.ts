import { z } from 'zod';

// The values of environment variables that settings are read from, each validated with a
// message that says what was wrong and what is expected (never echoing a URL: it may hold
// a password).

const DURATION_UNITS_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const SIZE_UNITS = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
} as const;

/** A duration: `90s`, `30m`, `6h`, `500ms` or `1d`, as milliseconds (more than zero). */
export const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, {
    error: (issue) => `"${String(issue.input)}" is not a duration (write e.g. 90s, 30m or 6h)`,
  })
  .transform((text) => {
    const [, amount = '0', unit = 'ms'] = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text) ?? [];
    return Math.round(Number(amount) * DURATION_UNITS_MS[unit as keyof typeof DURATION_UNITS_MS]);
  })
  .refine((ms) => ms > 0, { error: 'must be longer than zero' });

/** A size: `512MiB`, `10GB` or a number of bytes, as bytes (more than zero). */
export const size = z
  .string()
  .regex(/^\d+\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)?$/i, {
    error: (issue) =>
      `"${String(issue.input)}" is not a size (write e.g. 512MiB, 10GiB or a number of bytes)`,
  })
  .transform((text) => {
    const [, amount = '0', unit = 'b'] = /^(\d+)\s*([a-z]*)$/i.exec(text) ?? [];
    return Number(amount) * SIZE_UNITS[(unit.toLowerCase() || 'b') as keyof typeof SIZE_UNITS];
  })
  .refine((bytes) => bytes > 0 && Number.isSafeInteger(bytes), { error: 'must be a positive size' });

/** A yes/no value: true, false, 1, 0, yes or no. */
export const flag = z
  .string()
  .regex(/^(true|false|1|0|yes|no)$/i, {
    error: (issue) => `"${String(issue.input)}" is not a yes/no value (write true or false)`,
  })
  .transform((text) => /^(true|1|yes)$/i.test(text));

/** A TCP port number, 0 to 65535. */
export const port = z
  .string()
  .regex(/^\d{1,5}$/, { error: (issue) => `"${String(issue.input)}" is not a port number` })
  .transform(Number)
  .refine((value) => value <= 65_535, {
    error: (issue) => `${String(issue.input)} is not a port number (0 to 65535)`,
  });

/**
 * A URL of one of `protocols`; `whenMissing` makes it required. The value is never echoed
 * in a message: it may hold a password.
 */
export function serviceUrl(protocols: readonly string[], whenMissing = 'is required') {
  const expected = `expected a ${protocols.map((protocol) => `${protocol}//`).join(' or ')} URL`;
  return z.string({ error: whenMissing }).refine(
    (text) => {
      try {
        return protocols.includes(new URL(text).protocol);
      } catch {
        return false;
      }
    },
    { error: expected },
  );
}

/** A comma-separated list of host names (with an optional port), in lower case. */
export const hostList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((host) => host.trim().toLowerCase())
      .filter((host) => host !== ''),
  )
  .pipe(
    z.array(
      z.string().regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d{1,5})?$/, {
        error: (issue) =>
          `"${String(issue.input)}" is not a host name (write e.g. github.com,git.example.com)`,
      }),
    ),
  );
