import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Opens `url` in the desktop's browser (`$BROWSER`, else `open` on macOS, `xdg-open`
 * elsewhere), detached; resolves false when none could be started (a server without a
 * desktop), which is no error: the URL is printed anyway. As Jupyter does, the browser is
 * given a file readable by this user alone that redirects to `url`, never `url` itself:
 * a program's arguments are visible to every user of the machine, and the URL carries the
 * secret that keeps them out.
 */
export async function openBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const command = env.BROWSER || (process.platform === 'darwin' ? 'open' : 'xdg-open');
  const dir = await mkdtemp(join(tmpdir(), 'fluksio-ui-'));
  const page = join(dir, 'open.html');
  const quoted = url.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  await writeFile(
    page,
    `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${quoted}"><title>fluksio</title><a href="${quoted}">Open the run pages</a>\n`,
    { mode: 0o600 },
  );
  return new Promise((resolve) => {
    const child = spawn(command, [page], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
