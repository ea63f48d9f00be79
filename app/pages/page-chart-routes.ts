import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../http/parse-input.js';
import type { PageAdmission } from './page-admission.js';
import { Id, IdParams } from './page-params.js';
import type { PageSource } from './page-source.js';
import { renderCurvesSvg, type SvgCurve } from './render-curves-svg.js';

/** The image's curves are cut down in the database to about its plot's width. */
const SVG_BUCKETS = 560;
const ChartQuery = z.object({ metric: z.string().min(1).max(200), baseline: Id.optional() }).loose();

/**
 * The image a check run's summary embeds (`/pages/charts/runs/:id/curves.svg?metric=`):
 * one metric of a run against its baseline's, for whoever may see both.
 */
export function pageChartRoutes(
  app: FastifyInstance,
  { source, admitted }: { source: PageSource; admitted: PageAdmission },
): void {
  app.get('/pages/charts/runs/:id/curves.svg', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    const { metric, baseline } = parseInput(ChartQuery, request.query, 'metric');
    const repository = await source.repositoryOfRun(id);
    const baselineRepository = baseline === undefined ? repository : await source.repositoryOfRun(baseline);
    // A baseline of another repository is as unknown as a missing one.
    const sameRepository = baselineRepository === repository ? repository : null;
    if (!(await admitted(request, reply, [repository, sameRepository], `run ${id}`, false))) return reply;
    const [data, baseData] = await Promise.all([
      source.runPage(id, SVG_BUCKETS),
      baseline === undefined ? null : source.runPage(baseline, SVG_BUCKETS),
    ]);
    const curves: SvgCurve[] = [];
    const own = data && Object.hasOwn(data.series, metric) ? data.series[metric] : undefined;
    if (own) curves.push({ label: 'this run', points: own.points, color: '#0072b2' });
    const base = baseData && Object.hasOwn(baseData.series, metric) ? baseData.series[metric] : undefined;
    if (base)
      curves.push({
        label: `baseline ${baseline!.slice(0, 12)}`,
        points: base.points,
        color: '#777777',
        dashed: true,
      });
    return reply
      .type('image/svg+xml')
      .header('cache-control', 'no-cache')
      .send(renderCurvesSvg({ title: metric, curves }));
  });
}
