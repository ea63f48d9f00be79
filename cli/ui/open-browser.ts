import { spawn } from 'node:child_process';

/**
 * Opens `url` in the desktop's browser (`$BROWSER`, else `open` on macOS, `xdg-open`
 * elsewhere), detached; resolves false when none could be started (a server without a
 * desktop), which is no error: the URL is printed anyway.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const command = env.BROWSER || (process.platform === 'darwin' ? 'open' : 'xdg-open');
  return new Promise((resolve) => {
    const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
