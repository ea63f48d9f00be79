import type { RunnerRow } from '../schemas/tables/runners.js';
import type { Run } from '../schemas/tables/runs.js';

/** What a run being queued is, for choosing a parked claim that may take it. */
export interface HandoffScope {
  labels: readonly string[];
  repository: string;
  fork: boolean;
}

/** The parked claim a run being queued is offered to: its insert leases the run to it. */
export interface HandoffTaker {
  runnerId: string;
  runnerName: string;
  acceptForks: boolean;
  leaseId: string;
}

/** A parked claim chosen for a run being queued, until the insert says whether it took it. */
export interface HandoffReservation {
  taker: HandoffTaker;
  /** The run the insert leased to the taker, or null: the claim goes back to waiting. */
  complete(run: Run | null): void;
  /**
   * The insert failed, and may have committed nonetheless (its answer lost): the claim
   * looks for a run leased under its lease before it answers or waits again.
   */
  fail(): void;
}

/** A claim parked in this process, offered to the runs queued here while it waits. */
export interface ParkedOffer {
  /** Resolves when a run was handed to this claim, or may have been (its insert failed). */
  readonly handed: Promise<void>;
  /**
   * Stops offering the claim. When a run is being handed to it, waits for the insert: the
   * run leased to it, or null. Never loses a run leased to the claim.
   */
  withdraw(): Promise<Run | null>;
}

/** The run leased under a lease id, if any (find-leased-run.ts). */
export type FindLeasedRun = (leaseId: string) => Promise<Run | null>;

interface Offer {
  runner: RunnerRow;
  acceptForks: boolean;
  leaseId: string;
  reserved: Promise<Run | null> | null;
  run: Run | null;
  withdrawn: boolean;
  wake: () => void;
}

/**
 * Hands a run queued in this process straight to a claim parked here (DESIGN §6): the
 * submit's INSERT stores the run already leased to the claim's runner, so the claim is
 * answered from the insert's own row with no second commit and no doorbell round. Only a
 * plausible taker is chosen here (labels, owner, repositories, forks); the insert decides
 * with the claim's own rule, the runner's current row, and FIFO — it takes the run only when
 * the runner may take it and no older queued run would be that runner's — else the run is
 * queued as always and the doorbell rings. Claims are offered oldest parked first.
 */
export class ClaimHandoff {
  private readonly offers: Offer[] = [];

  constructor(private readonly findLeasedRun: FindLeasedRun) {}

  /** Offers a claim that found nothing to take, while it waits for a ring. */
  park(runner: RunnerRow, acceptForks: boolean, leaseId: string): ParkedOffer {
    let wake: () => void = () => {};
    const handed = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const offer: Offer = { runner, acceptForks, leaseId, reserved: null, run: null, withdrawn: false, wake };
    this.offers.push(offer);
    return {
      handed,
      withdraw: async () => {
        offer.withdrawn = true;
        this.remove(offer);
        if (offer.reserved) return offer.reserved;
        return offer.run;
      },
    };
  }

  /** Chooses the oldest parked claim that may plausibly take the run, reserved until complete(). */
  reserve(scope: HandoffScope): HandoffReservation | null {
    const offer = this.offers.find((candidate) => candidate.reserved === null && mayTake(candidate, scope));
    if (!offer) return null;
    this.remove(offer);
    let settle: (run: Run | null | Promise<Run | null>) => void = () => {};
    offer.reserved = new Promise<Run | null>((resolve) => {
      settle = resolve;
    });
    let completed = false;
    return {
      taker: {
        runnerId: offer.runner.id,
        runnerName: offer.runner.name,
        acceptForks: offer.acceptForks,
        leaseId: offer.leaseId,
      },
      complete: (run) => {
        if (completed) return;
        completed = true;
        const taken = run !== null && run.status === 'running' && run.leaseId === offer.leaseId ? run : null;
        offer.run = taken;
        offer.reserved = null;
        settle(taken);
        // Handed: the claim answers. Not handed: it waits again, first offered the next run.
        if (taken) offer.wake();
        else if (!offer.withdrawn) this.offers.unshift(offer);
      },
      fail: () => {
        if (completed) return;
        completed = true;
        // Never offered again under a lease that may be taken: the claim wakes, reads what
        // its lease holds (a run, or nothing), and looks again under a new lease.
        settle(this.findLeasedRun(offer.leaseId));
        offer.wake();
      },
    };
  }

  private remove(offer: Offer): void {
    const index = this.offers.indexOf(offer);
    if (index >= 0) this.offers.splice(index, 1);
  }
}

/** The claim's rule (runner-may-take.ts), in JavaScript, for choosing a candidate only. */
function mayTake(offer: Offer, scope: HandoffScope): boolean {
  const { runner } = offer;
  const repository = scope.repository.toLowerCase();
  return (
    scope.labels.every((label) => runner.labels.includes(label)) &&
    repository.split('/', 1)[0] === runner.owner.toLowerCase() &&
    (runner.repositories.length === 0 ||
      runner.repositories.some((allowed) => allowed.toLowerCase() === repository)) &&
    (!scope.fork || offer.acceptForks)
  );
}
