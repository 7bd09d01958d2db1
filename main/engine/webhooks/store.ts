// The webhook tables (migration 2): receivers, the delivery queue and log, the routines in
// trouble, and the events cursor. Built on demand over a Store's connection, so that opening an
// older database read-only (status, doctor) never fails on tables it does not have.
import { writeTx } from '../store/busy.js';
import { hasTable, type DB } from '../store/db.js';

export const WEBHOOK_EVENTS = ['error', 'delayed', 'restart', 'recover'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export type DeliveryState = 'queued' | 'delivered' | 'failed' | 'dropped';

export interface Webhook {
  id: number;
  url: string;
  /** null: every routine. */
  routineId: string | null;
  events: WebhookEvent[];
  secret: string | null;
  createdAt: number;
}

export interface Delivery {
  id: number;
  webhookId: number;
  url: string;
  event: WebhookEvent;
  routineId: string | null;
  runId: string | null;
  payload: string;
  state: DeliveryState;
  attempts: number;
  nextAt: number | null;
  statusCode: number | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface Trouble {
  routineId: string;
  event: WebhookEvent;
  runId: string | null;
  since: number;
}

interface HookRecord {
  id: number;
  url: string;
  routine_id: string | null;
  events: string;
  secret: string | null;
  created_at: number;
}

interface DeliveryRecord {
  id: number;
  webhook_id: number;
  url: string;
  event: WebhookEvent;
  routine_id: string | null;
  run_id: string | null;
  payload: string;
  state: DeliveryState;
  attempts: number;
  next_at: number | null;
  status_code: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

const toHook = (r: HookRecord): Webhook => ({
  id: r.id,
  url: r.url,
  routineId: r.routine_id,
  events: r.events.split(',').filter(Boolean) as WebhookEvent[],
  secret: r.secret,
  createdAt: r.created_at,
});

const toDelivery = (r: DeliveryRecord): Delivery => ({
  id: r.id,
  webhookId: r.webhook_id,
  url: r.url,
  event: r.event,
  routineId: r.routine_id,
  runId: r.run_id,
  payload: r.payload,
  state: r.state,
  attempts: r.attempts,
  nextAt: r.next_at,
  statusCode: r.status_code,
  error: r.error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** True when the database has the webhook tables (schema version 2 or later). */
export function hasWebhookTables(db: DB): boolean {
  return hasTable(db, 'webhook_deliveries');
}

export class WebhookStore {
  private readonly s;
  constructor(readonly db: DB) {
    this.s = {
      insertHook: db.prepare(`INSERT INTO webhooks (url, routine_id, events, secret, created_at) VALUES (?, ?, ?, ?, ?)`),
      hooks: db.prepare(`SELECT * FROM webhooks ORDER BY id`),
      hook: db.prepare(`SELECT * FROM webhooks WHERE id = ?`),
      removeHook: db.prepare(`DELETE FROM webhooks WHERE id = ?`),
      matching: db.prepare(`SELECT * FROM webhooks WHERE (routine_id IS NULL OR routine_id = ?) AND (',' || events || ',') LIKE ('%,' || ? || ',%') ORDER BY id`),
      enqueue: db.prepare(`INSERT INTO webhook_deliveries (webhook_id, url, event, routine_id, run_id, payload, state, next_at, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?)`),
      queuedCount: db.prepare(`SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'queued'`).pluck(),
      oldestQueued: db.prepare(`SELECT * FROM webhook_deliveries WHERE state = 'queued' ORDER BY id LIMIT ?`),
      due: db.prepare(`SELECT * FROM webhook_deliveries WHERE state = 'queued' AND next_at <= ? ORDER BY next_at, id LIMIT ?`),
      nextDueAt: db.prepare(`SELECT MIN(next_at) FROM webhook_deliveries WHERE state = 'queued'`).pluck(),
      delivery: db.prepare(`SELECT * FROM webhook_deliveries WHERE id = ?`),
      finish: db.prepare(`UPDATE webhook_deliveries SET state = ?, attempts = ?, next_at = NULL, status_code = ?, error = ?, updated_at = ? WHERE id = ? AND state = 'queued'`),
      retry: db.prepare(`UPDATE webhook_deliveries SET attempts = ?, next_at = ?, status_code = ?, error = ?, updated_at = ? WHERE id = ? AND state = 'queued'`),
      dropForHook: db.prepare(`UPDATE webhook_deliveries SET state = 'dropped', next_at = NULL, error = ?, updated_at = ? WHERE webhook_id = ? AND state = 'queued'`),
      recent: db.prepare(`SELECT * FROM webhook_deliveries ORDER BY id DESC LIMIT ?`),
      counts: db.prepare(`SELECT state, COUNT(*) AS n FROM webhook_deliveries GROUP BY state`),
      // The log keeps the newest finished deliveries; the queue is never pruned here.
      prune: db.prepare(`DELETE FROM webhook_deliveries WHERE state <> 'queued' AND id < (
        SELECT COALESCE(MIN(id), 0) FROM (SELECT id FROM webhook_deliveries WHERE state <> 'queued' ORDER BY id DESC LIMIT ?))`),
      trouble: db.prepare(`SELECT routine_id AS routineId, event, run_id AS runId, since FROM webhook_trouble WHERE routine_id = ?`),
      troubles: db.prepare(`SELECT routine_id AS routineId, event, run_id AS runId, since FROM webhook_trouble ORDER BY routine_id`),
      setTrouble: db.prepare(`INSERT INTO webhook_trouble (routine_id, event, run_id, since) VALUES (?, ?, ?, ?)
        ON CONFLICT (routine_id) DO UPDATE SET event = excluded.event, run_id = excluded.run_id`),
      clearTrouble: db.prepare(`DELETE FROM webhook_trouble WHERE routine_id = ?`),
      clearTroubles: db.prepare(`DELETE FROM webhook_trouble`),
      cursor: db.prepare(`SELECT value FROM meta WHERE key = 'webhooks_cursor'`).pluck(),
      setCursor: db.prepare(`INSERT INTO meta (key, value) VALUES ('webhooks_cursor', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
    };
  }

  addHook(h: { url: string; routineId: string | null; events: readonly WebhookEvent[]; secret: string | null }, now: number): Webhook {
    const id = Number(this.s.insertHook.run(h.url, h.routineId, h.events.join(','), h.secret, now).lastInsertRowid);
    return this.hook(id)!;
  }

  hooks(): Webhook[] {
    return (this.s.hooks.all() as HookRecord[]).map(toHook);
  }

  hook(id: number): Webhook | null {
    const r = this.s.hook.get(id) as HookRecord | undefined;
    return r ? toHook(r) : null;
  }

  /** Removes a receiver; what was still queued for it is dropped (and says why). */
  removeHook(id: number, now: number): boolean {
    return writeTx(this.db, () => {
      if (this.s.removeHook.run(id).changes === 0) return false;
      this.s.dropForHook.run('webhook removed before delivery', now, id);
      return true;
    });
  }

  /** Receivers for an event of a routine (global ones and the routine's own). */
  matching(routineId: string | null, event: WebhookEvent): Webhook[] {
    return (this.s.matching.all(routineId ?? '', event) as HookRecord[]).map(toHook).filter((h) => h.routineId === null || h.routineId === routineId);
  }

  enqueue(d: { webhookId: number; url: string; event: WebhookEvent; routineId: string | null; runId: string | null; payload: string }, now: number): number {
    return Number(this.s.enqueue.run(d.webhookId, d.url, d.event, d.routineId, d.runId, d.payload, now, now, now).lastInsertRowid);
  }

  queuedCount(): number {
    return Number(this.s.queuedCount.get());
  }

  oldestQueued(limit: number): Delivery[] {
    return (this.s.oldestQueued.all(limit) as DeliveryRecord[]).map(toDelivery);
  }

  due(now: number, limit: number): Delivery[] {
    return (this.s.due.all(now, limit) as DeliveryRecord[]).map(toDelivery);
  }

  nextDueAt(): number | null {
    return (this.s.nextDueAt.get() as number | null) ?? null;
  }

  delivery(id: number): Delivery | null {
    const r = this.s.delivery.get(id) as DeliveryRecord | undefined;
    return r ? toDelivery(r) : null;
  }

  /** Compare-and-set out of the queue: false when it had left it already (dropped meanwhile). */
  finish(id: number, state: Exclude<DeliveryState, 'queued'>, attempts: number, statusCode: number | null, error: string | null, now: number): boolean {
    return this.s.finish.run(state, attempts, statusCode, error, now, id).changes === 1;
  }

  retryLater(id: number, attempts: number, nextAt: number, statusCode: number | null, error: string | null, now: number): boolean {
    return this.s.retry.run(attempts, nextAt, statusCode, error, now, id).changes === 1;
  }

  recent(limit: number): Delivery[] {
    return (this.s.recent.all(limit) as DeliveryRecord[]).map(toDelivery);
  }

  counts(): Record<DeliveryState, number> {
    const out: Record<DeliveryState, number> = { queued: 0, delivered: 0, failed: 0, dropped: 0 };
    for (const r of this.s.counts.all() as { state: DeliveryState; n: number }[]) out[r.state] = r.n;
    return out;
  }

  prune(keep: number): number {
    return this.s.prune.run(keep).changes;
  }

  trouble(routineId: string): Trouble | null {
    return (this.s.trouble.get(routineId) as Trouble | undefined) ?? null;
  }

  troubles(): Trouble[] {
    return this.s.troubles.all() as Trouble[];
  }

  /** In trouble since the first notice; a later notice updates what it is, not since when. */
  setTrouble(routineId: string, event: WebhookEvent, runId: string | null, now: number): void {
    this.s.setTrouble.run(routineId, event, runId, now);
  }

  clearTrouble(routineId: string): void {
    this.s.clearTrouble.run(routineId);
  }

  clearTroubles(): void {
    this.s.clearTroubles.run();
  }

  cursor(): number {
    const v = this.s.cursor.get() as string | undefined;
    return v === undefined ? -1 : Number(v);
  }

  setCursor(id: number): void {
    this.s.setCursor.run(String(id));
  }
}
