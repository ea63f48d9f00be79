import type { Colors } from 'picocolors/types.js';
import type { EventSink } from '../../runner/ports.js';

/**
 * A re-executed stage's output on a terminal, prefixed by its name as `fluksio run`
 * shows it, and a line when the stage is executed a second time (its first bytes
 * differed from the cache's). One per stage verified.
 */
export function verifyProgress(write: (text: string) => void, colors: Colors, width: number): EventSink {
  let started = 0;
  return {
    emit: (event) => {
      if (event.type === 'stage.log') {
        for (const line of event.lines) write(`  ${colors.dim(`${event.stage.padEnd(width)} │`)} ${line}\n`);
      } else if (event.type === 'stage.started' && ++started > 1) {
        write(`  ${colors.dim(`${event.stage}: its bytes differ from the cache's; executing it again`)}\n`);
      }
    },
    flush: async () => {},
  };
}
