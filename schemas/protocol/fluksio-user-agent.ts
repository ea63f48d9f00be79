/** What a fluksio client says it is in `User-Agent` (a log line of the control plane shows it). */
export interface FluksioAgent {
  /** The package version, e.g. `0.1.0`. */
  version: string;
  /** The protocol it speaks (protocol-version.ts). */
  protocol: number;
  /** `process.version`, e.g. `v22.11.0`. */
  node: string;
  /** `process.platform process.arch`, e.g. `linux x64`. */
  platform: string;
}

/** `fluksio/0.1.0 (protocol 1; node v22.11.0; linux x64)`: the product token first, as RFC 9110 §10.1.5 has it. */
export function fluksioUserAgent(agent: FluksioAgent): string {
  return `fluksio/${agent.version} (protocol ${agent.protocol}; node ${agent.node}; ${agent.platform})`;
}

/** The fluksio version a `User-Agent` names (`fluksio/0.1.0 …` → `0.1.0`), or null for another client (curl). */
export function fluksioVersionOf(userAgent: string | undefined): string | null {
  return /^fluksio\/([\w.+-]{1,64})(?:\s|$)/.exec(userAgent ?? '')?.[1] ?? null;
}
