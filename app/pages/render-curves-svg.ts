import { downsamplePoints } from '../../core/downsample-points.js';
import { escapeHtml } from './page-shell.js';

/** One line of the image: this run's series or its baseline's (dashed). */
export interface SvgCurve {
  label: string;
  points: readonly { step: number; value: number }[];
  color: string;
  dashed?: boolean;
}

const WIDTH = 640;
const HEIGHT = 280;
const PAD = { left: 64, right: 16, top: 32, bottom: 44 };
/** More points than pixels draw nothing more: a long series is thinned to this many. */
const MAX_POINTS = 1000;

/**
 * A metric's curves as a self-contained SVG (step on x, value on y, min and max marked,
 * a legend), for the check run's summary, which GitHub shows as an image (as CML's reports
 * do). Pure: no fonts or scripts are referenced, every text is escaped.
 */
export function renderCurvesSvg({ title, curves }: { title: string; curves: readonly SvgCurve[] }): string {
  const all = curves.flatMap((curve) => curve.points).filter((point) => Number.isFinite(point.value));
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${PAD.left}" y="20" font-size="14" font-weight="bold">${escapeHtml(title)}</text>`,
  ];
  if (all.length === 0) {
    parts.push(`<text x="${PAD.left}" y="${HEIGHT / 2}">No points were streamed.</text>`, '</svg>');
    return parts.join('\n');
  }
  const minX = Math.min(...all.map((point) => point.step));
  const maxX = Math.max(...all.map((point) => point.step));
  const minY = Math.min(...all.map((point) => point.value));
  const maxY = Math.max(...all.map((point) => point.value));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (step: number): number =>
    PAD.left + (maxX === minX ? plotW / 2 : ((step - minX) / (maxX - minX)) * plotW);
  const y = (value: number): number =>
    PAD.top + (maxY === minY ? plotH / 2 : (1 - (value - minY) / (maxY - minY)) * plotH);
  const bottom = PAD.top + plotH;
  parts.push(
    `<path d="M${PAD.left} ${PAD.top}V${bottom}H${PAD.left + plotW}" fill="none" stroke="#555555"/>`,
    `<text x="${PAD.left - 6}" y="${PAD.top + 4}" text-anchor="end">${number(maxY)}</text>`,
    `<text x="${PAD.left - 6}" y="${bottom}" text-anchor="end">${number(minY)}</text>`,
    `<text x="${PAD.left}" y="${bottom + 16}">${number(minX)}</text>`,
    `<text x="${PAD.left + plotW}" y="${bottom + 16}" text-anchor="end">${number(maxX)}</text>`,
    `<text x="${PAD.left + plotW / 2}" y="${bottom + 16}" text-anchor="middle">step</text>`,
  );
  curves.forEach((curve, i) => {
    const points = thin(curve.points.filter((point) => Number.isFinite(point.value)));
    if (points.length > 0) {
      const d = points.map(
        (point, j) => `${j === 0 ? 'M' : 'L'}${x(point.step).toFixed(1)} ${y(point.value).toFixed(1)}`,
      );
      parts.push(
        `<path d="${d.join('')}" fill="none" stroke="${curve.color}" stroke-width="2"${curve.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      );
    }
    const legendX = PAD.left + i * 180;
    parts.push(
      `<line x1="${legendX}" y1="${HEIGHT - 8}" x2="${legendX + 24}" y2="${HEIGHT - 8}" stroke="${curve.color}" stroke-width="2"${curve.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
      `<text x="${legendX + 30}" y="${HEIGHT - 4}">${escapeHtml(curve.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** A long series cut down to MAX_POINTS, min and max per bucket: a spike of one step still shows. */
function thin<T extends { step: number; value: number }>(points: readonly T[]): readonly T[] {
  return downsamplePoints(points, MAX_POINTS / 2);
}

function number(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
}
