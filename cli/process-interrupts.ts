import type { HoldExit } from '../present/terminal/cli-io.js';

/** What Ctrl-C does to the `fluksio` process: the first aborts `signal`; see listenForInterrupts. */
export interface ProcessInterrupts {
  signal: AbortSignal;
  holdExit: HoldExit;
}

/** The exit code of a command left with a second Ctrl-C (128 + SIGINT, as shells report it). */
export const INTERRUPTED_EXIT = 130;

/**
 * Ctrl-C cancels the command in progress: a run's stages get SIGINT, then SIGTERM and
 * SIGKILL, and the run is recorded `cancelled`; a remote run is cancelled on the control
 * plane. A second Ctrl-C exits at once (INTERRUPTED_EXIT) — unless work the first one
 * started is held (`holdExit`: the cancel requests of `fluksio submit --wait`), which
 * would be lost: then it exits as soon as that work is done, and a third Ctrl-C exits at
 * once, printing what of it was left undone. SIGTERM and SIGHUP count as Ctrl-C.
 */
export function listenForInterrupts(): ProcessInterrupts {
  const controller = new AbortController();
  const held = new Set<{ what: string; unfinished: () => string | null }>();
  let received = 0;
  const say = (text: string) => {
    try {
      process.stderr.write(text);
    } catch {
      // A hung-up terminal takes no more output; the command is cancelled all the same.
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    received += 1;
    if (received === 1) {
      say(`\nfluksio: ${signal} received, cancelling (again to exit at once)\n`);
      controller.abort();
      return;
    }
    if (held.size === 0) process.exit(INTERRUPTED_EXIT);
    if (received === 2) {
      const what = [...new Set([...held].map((each) => each.what))].join(' and ');
      say(`\nfluksio: ${signal} received again: exiting once ${what} are answered (again to exit at once)\n`);
      return;
    }
    for (const each of held) {
      const left = each.unfinished();
      if (left) say(`fluksio: ${left}\n`);
    }
    process.exit(INTERRUPTED_EXIT);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal cancels as Ctrl-C does: the run is recorded, and what a stage
  // borrowed from the work tree (a DVC params file) is put back.
  process.on('SIGHUP', onSignal);

  const holdExit: HoldExit = async (work, { what, unfinished }) => {
    const entry = { what, unfinished };
    held.add(entry);
    try {
      return await work;
    } finally {
      held.delete(entry);
      // A second Ctrl-C came meanwhile: it exits now that nothing it would lose is left.
      if (received >= 2 && held.size === 0) process.exit(INTERRUPTED_EXIT);
    }
  };
  return { signal: controller.signal, holdExit };
}
