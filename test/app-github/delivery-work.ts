import { eq, sql } from 'drizzle-orm';
import { pino } from 'pino';
import type { GitHubWork } from '../../app/github/github-work.js';
import { inProcessLock } from '../../app/keyed-lock.js';
import { deliveries } from '../../schemas/tables/deliveries.js';
import { recordDelivery } from '../../store/deliveries/record-delivery.js';
import { probotForDouble } from '../github/probot-for-double.js';
import type { GitHubAppWorld } from './github-app-fixture.js';

/** What processing a delivery works with, as startGitHubApp makes it but without the outbox. */
export function deliveryWork(world: GitHubAppWorld): GitHubWork {
  const probot = probotForDouble(world.double);
  const github = world.settings.github;
  if (!github) throw new Error('the world has no GitHub App');
  return {
    db: world.db,
    lock: inProcessLock(),
    github,
    installationApi: (id) => probot.auth(id),
    notifications: { notifyRun: async () => {}, notifyNotice: async () => {}, notifyGroup: async () => {} },
    ringDoorbell: async () => {},
    ringRunBell: async () => {},
    onlineWindowMs: 60_000,
    logger: pino({ level: 'silent' }),
  };
}

/** Stores a delivery as the webhook would, without enqueueing it. */
export async function storeDelivery(
  world: GitHubAppWorld,
  delivery: { id: string; name: string; payload: unknown },
): Promise<void> {
  await recordDelivery({
    db: world.db,
    delivery: {
      id: delivery.id,
      event: delivery.name,
      action: (delivery.payload as { action?: string }).action ?? null,
      installationId: null,
      payload: delivery.payload as never,
    },
  });
}

/**
 * Stores a delivery as the webhook would, received an hour from now: the world's
 * reconciler, which takes deliveries older than ten seconds, leaves it to the test's own
 * attempts.
 */
export async function storeDeliveryLeftToTest(
  world: GitHubAppWorld,
  delivery: { id: string; name: string; payload: unknown },
): Promise<void> {
  await storeDelivery(world, delivery);
  await world.db
    .update(deliveries)
    .set({ receivedAt: sql`now() + interval '1 hour'` })
    .where(eq(deliveries.id, delivery.id));
}

/** Dates a stored delivery a minute back: the reconciler takes deliveries older than ten seconds. */
export async function leaveDeliveryToReconciler(world: GitHubAppWorld, deliveryId: string): Promise<void> {
  await world.db
    .update(deliveries)
    .set({ receivedAt: sql`now() - interval '1 minute'` })
    .where(eq(deliveries.id, deliveryId));
}

/**
 * Stores a delivery as the webhook would, as if sixteen workers had begun it and died: its
 * next attempt gives it up.
 */
export async function storeDeliveryOutOfAttempts(
  world: GitHubAppWorld,
  delivery: { id: string; name: string; payload: unknown },
): Promise<void> {
  await storeDelivery(world, delivery);
  await world.db.update(deliveries).set({ attempts: 16 }).where(eq(deliveries.id, delivery.id));
}

/** Every stored delivery's row. */
export async function storedDeliveries(world: GitHubAppWorld) {
  return world.db.select().from(deliveries);
}
