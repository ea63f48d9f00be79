/**
 * The control plane's environment is wrong. `problems` lists every one of them, each
 * naming its variable (`FLUKSIO_LEASE_TTL: "x" is not a duration …`); the CLI prints them
 * and exits 2.
 */
export class InvalidSettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The control plane's settings are wrong:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
    this.name = 'InvalidSettingsError';
  }
}
