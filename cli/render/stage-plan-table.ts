import type { Colors } from 'picocolors/types.js';
import { short } from '../../core/text/format.js';
import type { StagePlan } from '../../schemas/stage-plan.js';
import { fitTable } from './fit-table.js';

/**
 * `fluksio status` on a terminal: a line per stage saying what a run would do with it
 * (run, restore, depends) and why, in the run summary's words, and what the stage does when
 * the pipeline describes it (DVC's `desc`), then the counts. The table holds within
 * `width`, wrapping the reasons (the descriptions are left out first).
 */
export function renderStagePlanTable(
  plans: readonly (StagePlan & { description: string | null })[],
  { width, colors }: { width: number; colors: Colors },
): string {
  const paint: Record<StagePlan['action'], (text: string) => string> = {
    run: colors.yellow,
    restore: colors.green,
    depends: colors.cyan,
  };
  const described = plans.some((plan) => plan.description !== null);
  const table = fitTable({
    head: ['stage', 'would', 'why', ...(described ? ['description'] : [])],
    rows: plans.map((plan) => [
      colors.bold(plan.name),
      paint[plan.action](plan.action),
      plan.action === 'restore' ? `cached by run ${short(plan.cachedFrom, 10)}` : plan.reasons.join('; '),
      ...(described ? [plan.description ?? colors.dim('–')] : []),
    ]),
    width,
    droppable: ['description'],
  });
  const count = (action: StagePlan['action']) => plans.filter((plan) => plan.action === action).length;
  const totals = [
    `${count('run')} would run`,
    `${count('restore')} would be restored`,
    ...(count('depends') > 0 ? [`${count('depends')} depend on what runs first`] : []),
  ].join(', ');
  return `${table}\n${colors.dim(totals)}\n`;
}
