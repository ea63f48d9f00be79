import type { FastifyRequest } from 'fastify';

/**
 * What a request may see of a repository's pages: `allowed`; `expired` (a genuine signed
 * link past its time: 403 with the way to get a new one); `forbidden` (the local UI
 * without its secret: 403); `hidden` (anything else: answered exactly as a page that does
 * not exist, 404, so nobody learns that a run exists).
 */
export type PageVerdict = 'allowed' | 'expired' | 'forbidden' | 'hidden';

/** Decides who may look at which repository's pages (control-plane-page-gate.ts, local-secret-gate.ts). */
export interface PageGate {
  admit(request: FastifyRequest, repository: string): Promise<PageVerdict>;
}
