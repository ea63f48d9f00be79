/** A runner is being added under a name another runner has; `fluksio runner add` answers it as bad input. */
export class RunnerExistsError extends Error {
  constructor(readonly runnerName: string) {
    super(
      `A runner named "${runnerName}" exists already; choose another name, or remove it first (fluksio runner remove ${runnerName})`,
    );
    this.name = 'RunnerExistsError';
  }
}
