import * as core from '@actions/core';
import pc from 'picocolors';
import { getInputs } from './input-helper.js';
import { runLocalMode } from './local-mode.js';
import { runSubmitMode } from './submit-mode.js';
import { WorkflowLog } from './workflow-log.js';
import { messageOf } from '../core/text/message-of.js';

/**
 * The action's main step (action.yml `runs.main`): reads the inputs, runs the pipeline
 * here or submits it to the control plane, and sets the outputs and the step summary.
 * Whatever goes wrong fails the step with one sentence; bad input fails it before
 * anything ran or was submitted.
 */
export async function run(): Promise<void> {
  const cancel = cancelOnSignal();
  const log = new WorkflowLog();
  try {
    const inputs = getInputs();
    if (inputs.githubToken) core.setSecret(inputs.githubToken);
    if (inputs.server) core.setSecret(inputs.server.token);
    const context = {
      log,
      colors: pc.createColors(!process.env.NO_COLOR),
      signal: cancel.signal,
      env: process.env,
    };
    const result = inputs.server ? await runSubmitMode(inputs, context) : await runLocalMode(inputs, context);
    log.closeFence();
    for (const [name, value] of Object.entries(result.outputs)) core.setOutput(name, value);
    if (process.env.GITHUB_STEP_SUMMARY && result.outputs.summary) {
      await core.summary.addRaw(result.outputs.summary, true).write();
    }
    if (result.failure) core.setFailed(result.failure);
  } catch (error) {
    log.closeFence();
    core.setFailed(messageOf(error));
  }
}

/**
 * Cancelling a workflow signals its running step (SIGINT, then SIGTERM a few seconds
 * later): the first signal cancels what the step started — the stages here, or the runs
 * on the control plane; a second one exits at once.
 */
function cancelOnSignal(): AbortController {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    process.stdout.write(`fluksio: ${signal} received, cancelling\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return controller;
}
