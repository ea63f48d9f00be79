/**
 * A run's fetch credential will not be granted however often it is asked for (the App is
 * uninstalled, the repository renamed or gone): the run cannot be fetched and fails with
 * this sentence, instead of going back to the queue.
 */
export class CredentialRefusedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CredentialRefusedError';
  }
}
