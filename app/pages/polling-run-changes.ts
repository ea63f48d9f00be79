import type { RunChanges } from './run-changes.js';

/** Changes seen by looking again every `ms` (a process that cannot be told, as `fluksio ui`). */
export function pollingRunChanges(ms: number): RunChanges {
  return {
    take: () => ({
      wait: (most, signal) =>
        new Promise<void>((resolve) => {
          if (signal?.aborted) return resolve();
          const done = (): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, Math.min(ms, most));
          signal?.addEventListener('abort', done, { once: true });
        }),
      cancel: () => {},
    }),
  };
}
