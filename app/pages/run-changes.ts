/** A wait for one run, taken before reading it, so a change during the read is not missed. */
export interface RunChangeTicket {
  /** Resolves at the first change of the run since the ticket was taken, after `ms`, or on abort. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  /** Gives the ticket back without waiting. */
  cancel(): void;
}

/**
 * What a live page's stream waits on between its reads: a change to one run (RunBell on
 * a control plane; pollingRunChanges where no writer can say, as for `fluksio ui`).
 */
export interface RunChanges {
  take(runId: string): RunChangeTicket;
}
