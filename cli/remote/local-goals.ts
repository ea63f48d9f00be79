import type { MetricGoals } from '../../schemas/metric-diff.js';
import { locateProject, readProjectPipeline } from '../../local/locate-project.js';

/**
 * The metric goals of the pipeline file here, for the control plane's runs (whose
 * pipeline is not read from it); none when there is none or it is broken.
 */
export async function localGoals(pipeline: string | undefined, cwd: string): Promise<MetricGoals> {
  try {
    return (await readProjectPipeline(await locateProject(pipeline, cwd))).metrics;
  } catch {
    return {};
  }
}
