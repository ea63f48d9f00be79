/**
 * The input was wrong (DESIGN §9: exit code 2). The message is what the user reads:
 * what was wrong, where, and what is expected; nothing was created.
 */
export class UsageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageError';
  }
}
