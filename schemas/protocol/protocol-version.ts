import { z } from 'zod';

/**
 * The runner↔control-plane protocol this fluksio speaks (DESIGN §6): every request the
 * runner, `fluksio submit`/`show`/`cancel`/`pull` and the action send carries it as
 * `X-Fluksio-Protocol`, and every answer of the control plane carries its own. Raise it
 * when a request or a reply changes so that the other side's schema would refuse or
 * misread it; a control plane that still answers the older shape keeps accepting it
 * (MIN_SUPPORTED_PROTOCOL stays), so control planes are upgraded first.
 */
export const PROTOCOL_VERSION = 1;

/** The oldest protocol a control plane of this fluksio still answers. */
export const MIN_SUPPORTED_PROTOCOL = 1;

/**
 * What a control plane that sends no `X-Fluksio-Protocol` speaks: fluksio before the
 * header spoke protocol 1.
 */
export const UNVERSIONED_PROTOCOL = 1;

/** The header both sides name their protocol in. */
export const PROTOCOL_HEADER = 'X-Fluksio-Protocol';

/** The protocols a control plane answers: `min` to `current`, both included. */
export interface ProtocolRange {
  min: number;
  current: number;
}

/** This fluksio's range. */
export const SUPPORTED_PROTOCOLS: ProtocolRange = {
  min: MIN_SUPPORTED_PROTOCOL,
  current: PROTOCOL_VERSION,
};

/** An `X-Fluksio-Protocol` value: a whole number. */
export const ProtocolHeader = z
  .string()
  .regex(/^\d{1,6}$/, { error: 'expected the whole number of a fluksio protocol, e.g. 1' })
  .transform(Number);
