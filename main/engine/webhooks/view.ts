// Reading webhooks and their deliveries, for status pages and `tend daemon status`: no
// validation here, so nothing of zod is loaded by commands that only look.
import type { Store } from '../store/store.js';
import { hasWebhookTables, WebhookStore, type Delivery, type DeliveryState, type Webhook, type WebhookEvent } from './store.js';
import { redactUrl } from './url.js';

export interface DeliveryView {
  id: number;
  webhookId: number;
  url: string;
  event: WebhookEvent;
  routineId: string | null;
  runId: string | null;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  statusCode: number | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryLog {
  counts: Record<DeliveryState, number>;
  deliveries: DeliveryView[];
}

export function viewDelivery(d: Delivery): DeliveryView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: d.id,
    webhookId: d.webhookId,
    url: redactUrl(d.url),
    event: d.event,
    routineId: d.routineId,
    runId: d.runId,
    state: d.state,
    attempts: d.attempts,
    nextAttemptAt: d.state === 'queued' ? iso(d.nextAt) : null,
    statusCode: d.statusCode,
    error: d.error,
    createdAt: iso(d.createdAt)!,
    updatedAt: iso(d.updatedAt)!,
  };
}

export function listWebhooks(store: Store): Webhook[] {
  return hasWebhookTables(store.db) ? new WebhookStore(store.db).hooks() : [];
}

export function deliveryLog(store: Store, limit = 50): DeliveryLog {
  if (!hasWebhookTables(store.db)) return { counts: { queued: 0, delivered: 0, failed: 0, dropped: 0 }, deliveries: [] };
  const wh = new WebhookStore(store.db);
  return { counts: wh.counts(), deliveries: wh.recent(limit).map(viewDelivery) };
}
