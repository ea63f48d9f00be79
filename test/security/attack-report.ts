import type { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';

/**
 * What an attacking stage printed, by attempt: each `name=<base64>` line of its log decoded,
 * and the whole log as `log` (for the message of a failed expectation).
 */
export async function attempts(
  world: ControlPlaneWorld,
  runId: string,
  stage: string,
): Promise<Record<string, string>> {
  const response = await fetch(`${world.app.url}/api/v1/runs/${runId}/logs/${stage}`, {
    headers: { authorization: `Bearer ${world.apiToken}` },
  });
  const { lines } = (await response.json()) as { lines: string[] };
  const found: Record<string, string> = {};
  for (const line of lines) {
    const match = /^(\w+)=(.*)$/.exec(line);
    if (match?.[1]) found[match[1]] = Buffer.from(match[2] ?? '', 'base64').toString();
  }
  return { ...found, log: lines.join('\n') };
}
