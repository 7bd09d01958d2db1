// The webhook part of `tend daemon status`: receivers, queue and log counts, the latest deliveries.
import type { Store } from '../store/store.js';
import { deliveryLog, listWebhooks, type DeliveryView } from './view.js';
import type { DeliveryState } from './store.js';

export interface WebhookStatus {
  receivers: number;
  counts: Record<DeliveryState, number>;
  recent: DeliveryView[];
}

export function webhookStatus(store: Store, recent = 10): WebhookStatus {
  const log = deliveryLog(store, recent);
  return { receivers: listWebhooks(store).length, counts: log.counts, recent: log.deliveries };
}

/** Lines for the human output of `tend daemon status`. */
export function webhookStatusLines(w: WebhookStatus | null | undefined): string[] {
  if (!w || (w.receivers === 0 && w.recent.length === 0)) return [];
  const c = w.counts;
  const lines = [`webhooks:  ${w.receivers} receiver(s); ${c.queued} queued, ${c.delivered} delivered, ${c.failed} failed, ${c.dropped} dropped`];
  for (const d of w.recent) {
    const detail = d.state === 'delivered' ? `HTTP ${d.statusCode}` : (d.error ?? (d.statusCode !== null ? `HTTP ${d.statusCode}` : ''));
    lines.push(`  #${d.id} ${d.updatedAt} ${d.event} ${d.routineId ?? '-'} → ${d.url}: ${d.state} after ${d.attempts} attempt(s)${detail ? ` (${detail})` : ''}`);
  }
  return lines;
}
