import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';

// `fluksio` is started by its shebang, as a user's shell starts it. Node 20 reads
// `--env-file` anywhere in its argv, the script's own arguments included: `fluksio runner
// --env-file secrets.env` must reach fluksio's option parsing, not Node's.

const BIN = fileURLToPath(new URL('../../bin/fluksio.js', import.meta.url));
const TEST_MAIN = fileURLToPath(new URL('../../build/test/main.mjs', import.meta.url));

let root: string;
let launcher: string;
beforeAll(async () => {
  // bin/fluksio.js as installed, loading the bundle under test as build/bundle/main.mjs.
  root = await mkdtemp(join(tmpdir(), 'fluksio-launcher-'));
  launcher = join(root, 'bin', 'fluksio.js');
  await mkdir(dirname(launcher), { recursive: true });
  await copyFile(BIN, launcher);
  await mkdir(join(root, 'build', 'bundle'), { recursive: true });
  await writeFile(
    join(root, 'build', 'bundle', 'main.mjs'),
    `export { main } from ${JSON.stringify(TEST_MAIN)};\n`,
  );
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Runs the launcher by its shebang, with PATH's node. */
function launch(args: string[], env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      launcher,
      args,
      {
        cwd: root,
        env: {
          PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
          HOME: root,
          NO_COLOR: '1',
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, output: stdout + stderr });
      },
    );
  });
}

test.each([['--env-file', 'MISSING.env'], ['--env-file=MISSING.env']])(
  '`fluksio runner %s` is told by fluksio that the file is missing (exit 2), not by Node (exit 9)',
  async (...args) => {
    const { code, output } = await launch(['runner', ...args], {
      FLUKSIO_RUNNER_TOKEN: 'flk_x',
      FLUKSIO_URL: 'http://127.0.0.1:1',
    });
    expect(output).not.toMatch(/^node: /m);
    expect(output).toMatch(/--env-file: cannot read .*MISSING\.env \(ENOENT\)/);
    expect(code, output).toBe(2);
  },
);

test('a runner secrets file is never loaded into the fluksio process itself (NODE_OPTIONS in it does nothing to Node)', async () => {
  const secrets = join(root, 'secrets.env');
  await writeFile(secrets, 'NODE_OPTIONS=--require /nonexistent/preload.js\nFLUKSIO_URL=http://x\n');
  const { code, output } = await launch(['runner', '--env-file', secrets], {
    FLUKSIO_RUNNER_TOKEN: 'flk_x',
    FLUKSIO_URL: 'http://127.0.0.1:1',
  });
  expect(output).not.toMatch(/Cannot find module|preload\.js/);
  expect(output).toMatch(/--env-file: FLUKSIO_URL in .*secrets\.env: FLUKSIO_\* names are reserved/);
  expect(code, output).toBe(2);
});

test('other Node options among fluksio’s arguments are fluksio’s to refuse', async () => {
  const { code, output } = await launch(['runs', '--inspect']);
  expect(output).toMatch(/unknown option '--inspect'/);
  expect(code, output).toBe(2);
});
