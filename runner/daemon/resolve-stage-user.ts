import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { StageUser } from '../sandbox/stage-user.js';
import { userProcesses } from '../sandbox/user-processes.js';

const run = promisify(execFile);

/** How to make a user fit for `--stage-user`, for the refusals below. */
const CREATE =
  'create a dedicated one: useradd --system --no-create-home --shell /usr/sbin/nologin fluksio-stage';

/**
 * Looks up `--stage-user NAME` (through NSS, as `getent passwd` does) and refuses a
 * user that cannot keep stages away from the runner: root, the runner's own user, one
 * whose primary group is root's, or one something else already runs as — every process
 * of the user is killed when a stage ends, so it must be dedicated to stages. The runner
 * itself must be root to start processes as another user. Each refusal says what is
 * wrong and how to fix it.
 */
export async function resolveStageUser(name: string, runnerUid: number): Promise<StageUser> {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*\$?$/.test(name)) {
    throw new Error(
      `--stage-user: "${name}" is not a user name; expected a login name such as fluksio-stage`,
    );
  }
  if (runnerUid !== 0) {
    throw new Error(
      `--stage-user ${name}: the runner runs as uid ${runnerUid}, and only root can start stages as another user; ` +
        'run the runner as root, or use --sandbox alone',
    );
  }
  const entry = await run('getent', ['passwd', name], { env: { PATH: '/usr/bin:/bin' } }).then(
    ({ stdout }) => stdout.trim().split('\n')[0] ?? '',
    () => '',
  );
  const [, , uidText, gidText] = entry.split(':');
  if (uidText === undefined || gidText === undefined) {
    throw new Error(`--stage-user ${name}: there is no such user on this machine; ${CREATE}`);
  }
  const user: StageUser = { name, uid: Number(uidText), gid: Number(gidText) };
  if (user.uid === 0) throw new Error(`--stage-user ${name}: it is root (uid 0); ${CREATE}`);
  if (user.uid === runnerUid) {
    throw new Error(`--stage-user ${name}: it is the runner's own user (uid ${user.uid}); ${CREATE}`);
  }
  if (user.gid === 0) {
    throw new Error(`--stage-user ${name}: its primary group is root's (gid 0); ${CREATE}`);
  }
  const running = userProcesses(user.uid);
  if (running.length > 0) {
    const examples = running
      .slice(0, 3)
      .map((process) => `${process.pid} ${process.name}`)
      .join(', ');
    throw new Error(
      `--stage-user ${name}: ${running.length} process(es) already run as uid ${user.uid} (${examples}), ` +
        `and every process of the stage user is killed when a stage ends; ${CREATE}`,
    );
  }
  return user;
}
