import { UsageError } from '../present/terminal/usage-error.js';

/**
 * The project never ran: it has no store to read (and reading creates none). A usage error
 * for a command about one run; `fluksio runs` lists no runs instead.
 */
export class NoRunsYetError extends UsageError {
  constructor(displayPath: string) {
    super(`No runs yet for ${displayPath}: start one with "fluksio run"`);
    this.name = 'NoRunsYetError';
  }
}
