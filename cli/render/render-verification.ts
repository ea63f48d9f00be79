import type { Colors } from 'picocolors/types.js';
import { formatDuration, short } from '../../core/text/format.js';
import type {
  StageNotVerified,
  StageVerification,
  VerifyReport,
  VerifyVerdict,
} from '../../schemas/stage-verification.js';

const BADGES: Record<VerifyVerdict, { text: string; color: keyof Colors }> = {
  deterministic: { text: '✓ deterministic', color: 'green' },
  nondeterministic: { text: '✗ nondeterministic', color: 'red' },
  stale: { text: '✗ stale', color: 'red' },
  unverifiable: { text: '? unverifiable', color: 'yellow' },
};
const BADGE_WIDTH = Math.max(...Object.values(BADGES).map((badge) => badge.text.length));

/**
 * One verified stage as a terminal shows it: its verdict, then the outs that differ with
 * their digests (cached, fresh, and a second execution's) and every finding.
 */
export function renderStageVerification(
  verification: StageVerification,
  width: number,
  colors: Colors,
): string {
  const badge = BADGES[verification.verdict];
  const paint = colors[badge.color] as (text: string) => string;
  const lines = [
    `${paint(badge.text)}${' '.repeat(BADGE_WIDTH - badge.text.length)} ${colors.bold(verification.stage.padEnd(width))}  ${formatDuration(verification.durationMs).padStart(7)}  ${colors.dim(`entry of run ${short(verification.entryRun, 10)}`)}`,
  ];
  for (const out of verification.outs) {
    const again = out.again === undefined ? '' : `  again ${short(out.again)}`;
    lines.push(`    ${out.path}  cached ${short(out.cached)}  fresh ${short(out.fresh)}${again}`);
    if (out.files && out.files.length > 0)
      lines.push(`      ${colors.dim(`files: ${out.files.join(', ')}`)}`);
  }
  for (const metric of verification.metrics) lines.push(`    metric ${metric}`);
  for (const finding of verification.findings) lines.push(`    ${colors.dim(finding)}`);
  return `${lines.join('\n')}\n`;
}

/** The closing lines: what was not verified and why, then the count of each verdict. */
export function renderVerifySummary(report: VerifyReport, colors: Colors): string {
  const lines = report.notVerified.map(
    (stage: StageNotVerified) => `${colors.dim('– not verified')} ${stage.stage}: ${stage.why}`,
  );
  const counts = (Object.keys(BADGES) as VerifyVerdict[]).flatMap((verdict) => {
    const stages = report.stages.filter((stage) => stage.verdict === verdict).map((stage) => stage.stage);
    return stages.length === 0
      ? []
      : [`${stages.length} ${verdict}${verdict === 'deterministic' ? '' : ` (${stages.join(', ')})`}`];
  });
  const verdict =
    report.stages.length === 0
      ? 'nothing to verify'
      : report.ok
        ? colors.green(
            `the cache can be trusted for ${report.stages.length === 1 ? 'this stage' : 'these stages'}`,
          )
        : colors.red('the cache cannot be trusted for every stage verified');
  lines.push(`${counts.length > 0 ? `${counts.join(', ')}: ` : ''}${verdict}`);
  return `\n${lines.join('\n')}\n`;
}
