import type { HoldExit } from '../present/terminal/cli-io.js';

/** What Ctrl-C does to the `fluksio` process: the first aborts `signal`; see listenForInterrupts. */
export interface ProcessInterrupts {
  signal: AbortSignal;
  holdExit: HoldExit;
  /**
   * Ends the process as a program Ctrl-C stopped, when Ctrl-C is what stopped the command:
   * killed by SIGINT (which shells report as 130). Does nothing otherwise.
   */
  endIfInterrupted(): void;
  /** The first of SIGINT, SIGTERM or SIGHUP received, or null. */
  received(): NodeJS.Signals | null;
}

export interface ListenForInterruptsOptions {
  /**
   * The command only prints what is recorded (`show`, `runs`, `diff`): when what reads its
   * output leaves (`fluksio show RUN --log train | head`) there is nothing to cancel, and it
   * ends without a word, as `git log | head` does.
   * @defaultValue false
   */
  onlyPrints?: boolean;
}

/** The exit code of a command left with a second Ctrl-C (128 + SIGINT, as shells report it). */
export const INTERRUPTED_EXIT = 130;

/**
 * Ctrl-C cancels the command in progress: a run's stages get SIGINT, then SIGTERM and
 * SIGKILL, and the run is recorded `cancelled`; a remote run is cancelled on the control
 * plane. A second Ctrl-C exits at once (INTERRUPTED_EXIT) — unless work the first one
 * started is held (`holdExit`: the cancel requests of `fluksio submit --wait`), which
 * would be lost: then it exits as soon as that work is done, and a third Ctrl-C exits at
 * once, printing what of it was left undone. SIGTERM and SIGHUP count as Ctrl-C, and so does
 * an output closed under it (EPIPE). A command Ctrl-C cancelled ends killed by SIGINT
 * (endIfInterrupted, exitInterrupted).
 */
export function listenForInterrupts(options: ListenForInterruptsOptions = {}): ProcessInterrupts {
  const controller = new AbortController();
  const held = new Set<{ what: string; unfinished: () => string | null }>();
  let received = 0;
  let first: NodeJS.Signals | null = null;
  let outputClosed = false;
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
      first = signal;
      say(`\nfluksio: ${signal} received, cancelling (again to exit at once)\n`);
      controller.abort();
      return;
    }
    if (held.size === 0) exitInterrupted(signal);
    if (received === 2) {
      const what = [...new Set([...held].map((each) => each.what))].join(' and ');
      say(`\nfluksio: ${signal} received again: exiting once ${what} are answered (again to exit at once)\n`);
      return;
    }
    for (const each of held) {
      const left = each.unfinished();
      if (left) say(`fluksio: ${left}\n`);
    }
    exitInterrupted(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A closed terminal cancels as Ctrl-C does: the run is recorded, and what a stage
  // borrowed from the work tree (a DVC params file) is put back.
  process.on('SIGHUP', onSignal);
  // So does output nobody reads any more (`fluksio run | head`, a pager quit): Node
  // ignores SIGPIPE and reports EPIPE on the stream, which unhandled ends the process
  // with a stack trace mid-run, leaving the run "running" and its stage's folders behind.
  const onOutputError = (error: NodeJS.ErrnoException) => {
    if (outputClosed) return;
    outputClosed = true;
    if (error.code === 'EPIPE' && !options.onlyPrints) {
      say(`\nfluksio: its output was closed (EPIPE: what read it has ended), cancelling\n`);
    }
    controller.abort();
  };
  process.stdout.on('error', onOutputError);
  process.stderr.on('error', onOutputError);

  const holdExit: HoldExit = async (work, { what, unfinished }) => {
    const entry = { what, unfinished };
    held.add(entry);
    try {
      return await work;
    } finally {
      held.delete(entry);
      // A second Ctrl-C came meanwhile: it exits now that nothing it would lose is left.
      if (received >= 2 && held.size === 0) exitInterrupted(first ?? 'SIGINT');
    }
  };
  const endIfInterrupted = () => {
    if (first === 'SIGINT') process.once('exit', dieOfSigint);
  };
  return { signal: controller.signal, holdExit, endIfInterrupted, received: () => first };
}

/**
 * Ends the process for `signal` (INTERRUPTED_EXIT). After Ctrl-C it dies of SIGINT itself
 * as it exits, as the shell's other programs do: a shell running a script (`for lr in …; do
 * fluksio run lr=$lr; done`) stops the script only when its child died of SIGINT, and takes
 * a child that exited with a code, even 130, for one that handled Ctrl-C and meant to go on
 * (bash's "wait and cooperative exit").
 */
function exitInterrupted(signal: NodeJS.Signals): never {
  if (signal === 'SIGINT') process.once('exit', dieOfSigint);
  process.exit(INTERRUPTED_EXIT);
}

/**
 * An `exit` listener added last, so what the others clean up (a scratch work tree, a DVC
 * params file put back) is done first: with its own SIGINT handlers gone, the process
 * sends itself SIGINT and dies of it.
 */
function dieOfSigint(): void {
  process.removeAllListeners('SIGINT');
  process.kill(process.pid, 'SIGINT');
}
