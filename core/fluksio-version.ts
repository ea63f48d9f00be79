import packageJson from '../package.json' with { type: 'json' };

/**
 * This fluksio's version, from package.json at build time (the bundles carry it): what
 * `--version` prints, what clients send in `User-Agent`, and what a control plane names
 * when it refuses a client of another protocol.
 */
export const FLUKSIO_VERSION: string = packageJson.version;
