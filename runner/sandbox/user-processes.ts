import { readdirSync, readFileSync } from 'node:fs';

/**
 * The live processes (zombies left out: they run nothing) whose real user id is `uid`,
 * read from `/proc/<pid>/status`. A process that exits during the scan is not listed.
 */
export function userProcesses(uid: number): { pid: number; name: string }[] {
  const found: { pid: number; name: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue;
    }
    const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1];
    if (Number(field('Uid')) !== uid || field('State') === 'Z') continue;
    found.push({ pid: Number(entry), name: field('Name') ?? '?' });
  }
  return found;
}
