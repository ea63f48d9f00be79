import { DirManifest } from '../schemas/out-record.js';
import type { CodeIndex } from './keys/code-index.js';
import { recheckStageInputs, type StageRecheck } from './keys/recheck-stage-inputs.js';
import type { StageKeyMaterial } from './keys/stage-key-inputs.js';
import type { StageRunContext } from './stage-run-context.js';
import { messageOf } from '../core/text/message-of.js';

/**
 * Checks a stage's key inputs again once it ran; a check that cannot be made counts as
 * a change, since nothing then shows that the key says what the stage read.
 */
export async function checkAfterRun(
  name: string,
  context: StageRunContext,
  material: StageKeyMaterial,
  before: CodeIndex,
): Promise<StageRecheck> {
  const { options } = context;
  try {
    return await recheckStageInputs({
      stage: name,
      pipeline: options.pipeline,
      workspace: options.workspace,
      material,
      produced: context.produced,
      readManifest: async (digest) =>
        DirManifest.parse(JSON.parse((await options.blobs.getBytes(digest)).toString('utf8'))),
      before,
      after: await context.codeView.read(),
      mask: (sentence) => context.masker.mask(sentence),
    });
  } catch (error) {
    const reason = `the inputs of ${name} could not be checked again after it ran: ${messageOf(error)}`;
    return { stageDirty: [reason], runDirty: [reason], warnings: [] };
  }
}
