import * as core from '@actions/core';
import { submitterClient } from '../client/server-connection.js';
import { cancelSubmittedRuns } from './cancel-submitted-runs.js';
import { getInputs } from './input-helper.js';
import { unsettledSubmittedRuns } from './submission-state.js';
import { messageOf } from '../core/text/message-of.js';

/**
 * The action's post step (action.yml `runs.post`), run when the job ends however it
 * ends: when the main step was killed before it ended by itself (a cancelled workflow),
 * cancels its submitted runs still queued or running on the control plane. Otherwise —
 * the main step succeeded or failed on its own — it does nothing. A failure here is a warning: the job's outcome is decided.
 */
export async function run(): Promise<void> {
  try {
    const runIds = unsettledSubmittedRuns();
    if (runIds.length === 0) return;
    const { server } = getInputs();
    if (!server) return;
    const cancelled = await cancelSubmittedRuns(
      submitterClient(server),
      runIds,
      'The workflow job ended before the run did',
    );
    if (cancelled.length > 0) core.info(`fluksio: cancelled ${cancelled.join(', ')} on ${server.url}`);
  } catch (error) {
    core.warning(`Could not cancel the submitted runs: ${messageOf(error)}`);
  }
}
