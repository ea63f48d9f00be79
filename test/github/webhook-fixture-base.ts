import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Context } from 'probot';
import {
  renderAccount,
  renderRepository,
  retarget,
  type Actor,
  type FixtureRepository,
} from './github-shapes.js';

/** The events fluksio handles. */
export type FixtureEventName =
  'push' | 'pull_request' | 'issue_comment' | 'check_run' | 'check_suite' | 'installation';

/** A delivery ready for `sendWebhook` or `probot.receive`: the event, its payload, a fresh delivery id. */
export interface WebhookDelivery<E extends FixtureEventName = FixtureEventName> {
  name: E;
  payload: Context<E>['payload'];
  id: string;
}

/** A payload being built. */
export type Payload = Record<string, unknown>;

const examples = createRequire(import.meta.url)(
  '@octokit/webhooks-examples/api.github.com/index.json',
) as Array<{
  name: string;
  examples: Payload[];
}>;

/** A fresh copy of the first example of `name` that `accept` takes. */
export function webhookExample(name: FixtureEventName, accept: (payload: Payload) => boolean): Payload {
  const found = examples.find((definition) => definition.name === name)?.examples.find(accept);
  if (!found) throw new Error(`@octokit/webhooks-examples has no ${name} example of that kind`);
  return structuredClone(found);
}

/** The delivery of `payload` under a fresh delivery id. */
export function toDelivery<E extends FixtureEventName>(name: E, payload: Payload): WebhookDelivery<E> {
  // The examples predate the payload types Probot compiles against; they are GitHub's own
  // deliveries, so the cast states what GitHub sends rather than hiding a mistake here.
  return { name, payload: payload as unknown as Context<E>['payload'], id: randomUUID() };
}

function installationOf(repo: FixtureRepository, installationId: number | undefined): Payload {
  const id = installationId ?? repo.installationId;
  if (id === undefined) {
    throw new Error(
      `No installationId for ${repo.owner}/${repo.name}: pass one or a repository from addRepository`,
    );
  }
  return { id, node_id: `I_${id}` };
}

/**
 * Rewrites what every payload shares: the repository (and every URL naming the example's),
 * the installation and the sender. `organization` is dropped: it describes the example's owner.
 */
export function retargetPayload(
  payload: Payload,
  repo: FixtureRepository,
  installationId: number | undefined,
  sender: Actor,
): Payload {
  const template = payload.repository as Payload;
  const { organization: _organization, ...rest } = retarget(payload, [
    [String(template.full_name), `${repo.owner}/${repo.name}`],
  ]);
  return {
    ...rest,
    repository: renderRepository(template, repo),
    installation: installationOf(repo, installationId),
    sender: renderAccount(sender),
  };
}

/** What every builder takes besides its own fields. */
export interface CommonOptions {
  repo: FixtureRepository;
  /** @defaultValue `repo.installationId` */
  installationId?: number;
  /** @defaultValue `{ login: 'octocat' }` */
  sender?: Actor;
}

/** The SHA of no commit: `before` of a new branch, `after` of a deleted one. */
export const ZERO_SHA = '0'.repeat(40);
