import type { FastifyRequest } from 'fastify';

/**
 * What a request may see of a repository's pages: `allowed`; `expired` (a genuine signed
 * link past its time: 403 with the way to get a new one); `forbidden` (the local UI
 * without its secret: 403); `sign-in` (nobody is signed in, and sign-in with GitHub is
 * on: a page redirects there, an API answers 401); `hidden` (anything else: answered
 * exactly as a page that does not exist, 404, so nobody learns that a run exists).
 */
export type PageVerdict = 'allowed' | 'expired' | 'forbidden' | 'sign-in' | 'hidden';

/** Decides who may look at which repository's pages (control-plane-page-gate.ts, local-secret-gate.ts). */
export interface PageGate {
  /**
   * The verdict for `repository`'s pages; null stands for a run or sweep that does not
   * exist, which is `hidden` once the caller has shown who they are.
   */
  admit(request: FastifyRequest, repository: string | null): Promise<PageVerdict>;
  /** The signed-in user's login, shown on the pages with a way to sign out; absent without sign-in. */
  viewer?(request: FastifyRequest): Promise<string | null>;
}
