import { parseWorkflowCommand, type WorkflowCommand } from '../../../runner/output/workflow-command.js';

/**
 * The workflow commands the GitHub Actions runner would act on in a step's stdout. As the
 * runner does: leading whitespace before `::` is ignored, and between
 * `::stop-commands::<token>` and `::<token>::` nothing is a command.
 */
export function workflowCommands(stdout: string): WorkflowCommand[] {
  const commands: WorkflowCommand[] = [];
  let stopToken: string | null = null;
  for (const raw of stdout.split('\n')) {
    const line = raw.replace(/\r$/, '').trimStart();
    if (stopToken !== null) {
      if (line === `::${stopToken}::`) stopToken = null;
      continue;
    }
    const command = parseWorkflowCommand(line);
    if (!command) continue;
    if (command.name === 'stop-commands') stopToken = command.value;
    else commands.push(command);
  }
  return commands;
}

/** The lines of a `::group::<title>` in the log, the runner's fences left out. */
export function groupLines(stdout: string, title: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.indexOf(`::group::${title}`);
  if (start < 0) throw new Error(`No group ${title} in:\n${stdout}`);
  const end = lines.indexOf('::endgroup::', start);
  return lines.slice(start + 1, end).filter((line) => !/^::stop-commands::|^::[0-9a-f]{32}::$/.test(line));
}

/**
 * The outputs a step wrote to its `GITHUB_OUTPUT` file (`name<<delimiter` … `delimiter`,
 * as @actions/core writes them).
 */
export function parseOutputFile(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const match = /^([^<=]+)<<(.+)$/.exec(lines[index] ?? '');
    if (!match) continue;
    const [, name, delimiter] = match as unknown as [string, string, string];
    const end = lines.indexOf(delimiter, index + 1);
    outputs[name] = lines.slice(index + 1, end).join('\n');
    index = end;
  }
  return outputs;
}
