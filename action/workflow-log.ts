import { randomBytes } from 'node:crypto';
import * as core from '@actions/core';

/**
 * The job's log as the action writes it. Text that comes from a stage (its output, its
 * error, a traceback, a summary quoting them) is fenced with `::stop-commands::<token>`
 * and `::<token>::`: between the two the runner treats every line as text, so a stage
 * cannot set outputs, annotate, mask or unmask anything by printing `::…::` lines. The
 * token is random per fence, so a stage cannot end the fence early either.
 */
export class WorkflowLog {
  private fence: string | null = null;

  constructor(private readonly write: (text: string) => void = (text) => process.stdout.write(text)) {}

  /** Starts a collapsible group (`::group::`); the title must be our own text. */
  group(title: string): void {
    this.closeFence();
    this.write(`::group::${oneLine(title)}\n`);
  }

  endGroup(): void {
    this.closeFence();
    this.write('::endgroup::\n');
  }

  /** Lines that may hold anything: fenced, the fence opened once for consecutive calls. */
  untrusted(text: string): void {
    if (text === '') return;
    if (this.fence === null) {
      this.fence = randomBytes(16).toString('hex');
      this.write(`::stop-commands::${this.fence}\n`);
    }
    this.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /**
   * An annotation (`::error file=…,line=…::message`) through @actions/core, which escapes
   * the message and properties, so what they quote cannot break out of the command.
   */
  annotate(
    level: 'error' | 'warning' | 'notice',
    message: string,
    where: { file?: string; line?: number; title?: string } = {},
  ): void {
    this.closeFence();
    core[level](message, {
      ...(where.title ? { title: where.title } : {}),
      ...(where.file ? { file: where.file } : {}),
      ...(where.line ? { startLine: where.line } : {}),
    });
  }

  /** Ends the current fence, so the action's own commands work again. */
  closeFence(): void {
    if (this.fence === null) return;
    this.write(`::${this.fence}::\n`);
    this.fence = null;
  }
}

/** Text on one line: a newline in it could start a line the runner reads as a command. */
export function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ');
}
