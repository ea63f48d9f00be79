import type { onRequestAsyncHookHandler } from 'fastify';
import { fluksioVersionOf } from '../../schemas/protocol/fluksio-user-agent.js';
import {
  PROTOCOL_HEADER,
  ProtocolHeader,
  type ProtocolRange,
} from '../../schemas/protocol/protocol-version.js';
import { HttpError } from './http-error.js';

export interface ProtocolGateOptions {
  /** The protocols this control plane answers. */
  range: ProtocolRange;
  /** This control plane's fluksio version, named in a refusal. */
  version: string;
  /** Paths under `/api/` that no fluksio client calls (GitHub's webhooks): never refused. */
  exempt: readonly string[];
}

/**
 * The server-wide `onRequest` hook of protocol versions: every answer names the protocol
 * this control plane speaks (`X-Fluksio-Protocol`), so a newer client sees an older
 * server; a request under `/api/` naming a protocol outside `range` is answered 426 with
 * both versions and which side to upgrade, before its credential is checked or its body
 * read. A request without the header is answered as ever: fluksio before the header, and
 * curl. No `Upgrade` header goes with the 426: RFC 9110's would offer to switch the
 * connection's protocol, which is not what is asked.
 */
export function protocolGate({ range, version, exempt }: ProtocolGateOptions): onRequestAsyncHookHandler {
  const current = String(range.current);
  return async (request, reply) => {
    void reply.header(PROTOCOL_HEADER, current);
    const path = request.url.split('?')[0] ?? '';
    if (!path.startsWith('/api/') || exempt.includes(path)) return;
    const raw = request.headers[PROTOCOL_HEADER.toLowerCase()];
    const given = Array.isArray(raw) ? raw[0] : raw;
    // A client of this very protocol (every fluksio of this release) is let through unparsed.
    if (given === undefined || given === current) return;
    const parsed = ProtocolHeader.safeParse(given);
    if (!parsed.success) {
      throw new HttpError(
        400,
        `${PROTOCOL_HEADER}: "${given.slice(0, 20)}" is not a protocol number (e.g. ${range.current}); leave it out to be answered as any client`,
        PROTOCOL_HEADER,
      );
    }
    const clientVersion = fluksioVersionOf(request.headers['user-agent']);
    const refusal = protocolRefusal({ protocol: parsed.data, clientVersion, range, version });
    if (refusal === null) return;
    request.log.info(
      { protocol: parsed.data, clientVersion, userAgent: request.headers['user-agent'] },
      'refused a client of another protocol',
    );
    throw new HttpError(426, refusal, PROTOCOL_HEADER);
  };
}

/**
 * Why a client of `protocol` (fluksio `clientVersion`, when its User-Agent names it) is
 * refused by a control plane answering `range`, naming which side to upgrade; null when it is not.
 */
export function protocolRefusal({
  protocol,
  clientVersion,
  range,
  version,
}: {
  protocol: number;
  clientVersion: string | null;
  range: ProtocolRange;
  version: string;
}): string | null {
  if (protocol >= range.min && protocol <= range.current) return null;
  const client = `this client speaks fluksio protocol ${protocol}${clientVersion ? ` (fluksio ${clientVersion})` : ''}`;
  const answers =
    range.min === range.current ? `protocol ${range.current}` : `protocols ${range.min} to ${range.current}`;
  const server = `this control plane (fluksio ${version}) answers ${answers}`;
  if (protocol < range.min) {
    return `${PROTOCOL_HEADER}: ${client}, and ${server}: upgrade the client (the runner, the fluksio CLI or the action) to fluksio ${version}`;
  }
  return `${PROTOCOL_HEADER}: ${client}, newer than ${server}: upgrade the control plane (fluksio app) first${clientVersion ? `, to fluksio ${clientVersion}` : ''}; it goes on answering older clients`;
}
