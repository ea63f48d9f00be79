import { FLUKSIO_VERSION } from '../core/fluksio-version.js';
import {
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  ProtocolHeader,
  UNVERSIONED_PROTOCOL,
} from '../schemas/protocol/protocol-version.js';
import { ProtocolMismatchError } from './control-plane-errors.js';
import { isSuccess, type HttpAnswer } from './http-exchange.js';

/**
 * A ProtocolMismatchError when the control plane at `origin` answered `request` in an older
 * protocol than this client's (`X-Fluksio-Protocol`; a success without it comes from a
 * control plane from before the header, UNVERSIONED_PROTOCOL), so the answer is refused
 * before it is read with this protocol's schemas. Null when it speaks this protocol or a
 * newer one, which answers this one or says 426; an error without the header (a proxy's) is
 * judged by its status. A 426 is null too: the control plane's own sentence says it best.
 */
export function olderProtocolError({
  origin,
  request,
  answer,
}: {
  origin: string;
  request: string;
  answer: HttpAnswer;
}): ProtocolMismatchError | null {
  if (answer.status === 426) return null;
  const header = answer.header(PROTOCOL_HEADER);
  const parsed = header === null ? null : ProtocolHeader.safeParse(header);
  const spoken = parsed?.success
    ? parsed.data
    : header === null && isSuccess(answer.status)
      ? UNVERSIONED_PROTOCOL
      : null;
  if (spoken === null || spoken >= PROTOCOL_VERSION) return null;
  answer.discard();
  return new ProtocolMismatchError(
    answer.status,
    request,
    `The control plane at ${origin} speaks fluksio protocol ${spoken}, older than protocol ${PROTOCOL_VERSION} of this fluksio ${FLUKSIO_VERSION} (${request}): upgrade the control plane (fluksio app) to fluksio ${FLUKSIO_VERSION} or later; it goes on answering older runners and clients`,
    PROTOCOL_HEADER,
  );
}
