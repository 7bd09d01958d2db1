// Webhook delivery, run by the process that owns the data dir (the daemon). It tails the events
// table from a stored cursor (so nothing is lost or sent twice across restarts, and rows written by
// other processes count too), turns events into notices, queues one delivery per matching
// receiver in SQLite, and POSTs them with retries and exponential backoff. The queue is bounded:
// past `queueMax` waiting deliveries the oldest is dropped, with the reason in the delivery log and
// a `webhook:dropped` event. Nothing here throws into the daemon: a fault is logged and retried.
import type { EventEmitter } from 'node:events';
import { errorMessage } from '../errors.js';
import { nodeCrypto } from '../lazy-crypto.js';
import type { EngineEvents } from '../events/bus.js';
import type { NewEvent } from '../store/events.js';
import type { Store } from '../store/store.js';
import { tendVersion } from '../version.js';
import { noticeFor, stableRecoveries, type Notice } from './notices.js';
import { buildPayload } from './payload.js';
import { hasWebhookTables, WebhookStore, type Delivery } from './store.js';
import { redactUrl } from './url.js';

export interface WebhookOptions {
  /** Waiting deliveries kept at most; past it the oldest is dropped. */
  queueMax: number;
  /** Attempts per delivery before it is given up (failed). */
  maxAttempts: number;
  /** First retry delay; doubles per attempt up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Per-request deadline. */
  timeoutMs: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Finished deliveries kept in the log. */
  keepLog: number;
  /** How often the events table is read without a nudge (rows from other processes). */
  pollMs: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  queueMax: 200,
  maxAttempts: 10,
  backoffMs: 2000,
  maxBackoffMs: 5 * 60_000,
  timeoutMs: 10_000,
  concurrency: 4,
  keepLog: 1000,
  pollMs: 1000,
};

export interface DispatcherDeps {
  store: Store;
  now: () => number;
  /** Append to the logging plane (the engine's log, so the daemon log and the UI hear it). */
  log: (e: NewEvent) => void;
  /** Engine events: a nudge to read the events table at once. */
  bus?: EventEmitter<EngineEvents>;
}

const RETRYABLE = (status: number) => status >= 500 || status === 408 || status === 425 || status === 429;

/** Events turned into notices per turn of the event loop. */
const SCAN_SLICE = 2000;

export class WebhookDispatcher {
  readonly opts: WebhookOptions;
  private wh: WebhookStore | null = null;
  private readonly inflight = new Map<number, Promise<void>>();
  private readonly abort = new AbortController();
  private stopped = false;
  private started = false;
  private tickTimer: NodeJS.Timeout | null = null;
  private dueTimer: NodeJS.Timeout | null = null;
  private soon = false;
  private prunedAt = -Infinity;
  private tickedAt = -Infinity;
  private readonly onBus = () => this.nudge();

  constructor(
    private readonly deps: DispatcherDeps,
    opts: Partial<WebhookOptions> = {},
  ) {
    this.opts = { ...DEFAULT_WEBHOOK_OPTIONS, ...opts };
  }

  /** Begin tailing and delivering. The events before now that were not yet read are read too. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.deps.bus?.on('event', this.onBus);
    this.deps.bus?.on('pass', this.onBus);
    // The poll is for events other processes write; a tick the pass's nudge just made covers it.
    this.tickTimer = setInterval(() => {
      if (performance.now() - this.tickedAt >= this.opts.pollMs / 2) this.tick();
    }, this.opts.pollMs);
    this.tickTimer.unref();
    this.nudge();
  }

  /** Stop at once: requests in flight are abandoned and stay queued for the next owner. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.deps.bus?.off('event', this.onBus);
    this.deps.bus?.off('pass', this.onBus);
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.abort.abort();
    await Promise.allSettled(this.inflight.values());
  }

  /** Read new events and deliver what is due, soon (coalesced). */
  nudge(): void {
    if (this.soon || this.stopped) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      this.tick();
    });
  }

  private store(): WebhookStore | null {
    if (this.wh) return this.wh;
    if (!this.deps.store.db.open || !hasWebhookTables(this.deps.store.db)) return null;
    return (this.wh = new WebhookStore(this.deps.store.db));
  }

  private tick(): void {
    if (this.stopped) return;
    this.tickedAt = performance.now();
    try {
      this.scan();
      this.pump();
    } catch (err) {
      if (this.stopped || !this.deps.store.db.open) return;
      this.safeLog({ type: 'webhook:fault', message: `webhooks: ${errorMessage(err)}` });
    }
  }

  /** Turn new events (and realtime recoveries) into queued deliveries; returns how many were queued. */
  scan(): number {
    const wh = this.store();
    if (!wh) return 0;
    const { store } = this.deps;
    let queued = 0;
    const logs: NewEvent[] = [];
    // A backlog (events written while no daemon read them) is read in slices between passes and
    // API calls, never in one block: what is left goes on at the next turn of the event loop.
    // No receiver: nothing to notify, so a backlog is skipped rather than read (a receiver hears
    // about what happens from when it is added, as after the upgrade that brought webhooks).
    // Nor is there a recovery to announce: old troubles are dropped, and an idle daemon opens no
    // write transaction here each tick.
    if (wh.hooks().length === 0) {
      const last = store.events.lastId();
      if (last > wh.cursor()) store.tx(() => wh.setCursor(last));
      if (wh.troubles().length > 0) store.tx(() => wh.clearTroubles());
      return 0;
    }
    for (let read = 0; ; ) {
      if (read >= SCAN_SLICE) {
        this.nudge();
        break;
      }
      const cursor = wh.cursor();
      const rows = store.events.after(Math.max(0, cursor), 500);
      read += rows.length;
      if (rows.length === 0) break;
      store.tx(() => {
        for (const e of rows) {
          const n = noticeFor(store, wh, e);
          if (n) queued += this.enqueue(wh, n, logs);
        }
        wh.setCursor(rows[rows.length - 1]!.id);
      });
      if (rows.length < 500) break;
    }
    if (wh.troubles().length > 0)
      store.tx(() => {
        for (const n of stableRecoveries(store, wh, this.deps.now())) queued += this.enqueue(wh, n, logs);
      });
    for (const l of logs) this.safeLog(l);
    return queued;
  }

  private enqueue(wh: WebhookStore, n: Notice, logs: NewEvent[]): number {
    const hooks = wh.matching(n.routineId, n.event);
    if (hooks.length === 0) return 0;
    const now = this.deps.now();
    const body = JSON.stringify(buildPayload({ id: n.key, event: n.event, at: n.at, message: n.message, def: n.def, routineId: n.routineId, run: n.run, source: n.source }));
    for (const h of hooks) wh.enqueue({ webhookId: h.id, url: h.url, event: n.event, routineId: n.routineId, runId: n.run?.id ?? null, payload: body }, now);
    this.bound(wh, logs, now);
    return hooks.length;
  }

  /** Past queueMax waiting deliveries, drop the oldest (never one whose request is in flight). */
  private bound(wh: WebhookStore, logs: NewEvent[], now: number): void {
    const excess = wh.queuedCount() - this.opts.queueMax;
    if (excess <= 0) return;
    const victims = wh.oldestQueued(excess + this.inflight.size).filter((d) => !this.inflight.has(d.id)).slice(0, excess);
    for (const d of victims) {
      const why = `queue full (${this.opts.queueMax} waiting): dropped the oldest undelivered`;
      if (!wh.finish(d.id, 'dropped', d.attempts, d.statusCode, d.error ? `${why}; last error: ${d.error}` : why, now)) continue;
      logs.push({
        type: 'webhook:dropped',
        routineId: d.routineId,
        runId: d.runId,
        message: `webhook delivery ${d.id} (${d.event} to ${redactUrl(d.url)}) dropped: ${why}`,
        data: { deliveryId: d.id, webhookId: d.webhookId },
      });
    }
  }

  /** Start requests for what is due, up to the concurrency; arm a timer for the next one. */
  private pump(): void {
    const wh = this.store();
    if (!wh || this.stopped) return;
    const now = this.deps.now();
    const free = this.opts.concurrency - this.inflight.size;
    if (free > 0) {
      for (const d of wh.due(now, free + this.inflight.size).filter((x) => !this.inflight.has(x.id)).slice(0, free)) {
        const p = this.attempt(wh, d)
          .catch((err) => this.safeLog({ type: 'webhook:fault', message: `webhook delivery ${d.id}: ${errorMessage(err)}` }))
          .finally(() => {
            this.inflight.delete(d.id);
            this.nudge();
          });
        this.inflight.set(d.id, p);
      }
    }
    if (this.dueTimer) clearTimeout(this.dueTimer);
    this.dueTimer = null;
    const next = wh.nextDueAt();
    if (next !== null && this.inflight.size < this.opts.concurrency) {
      this.dueTimer = setTimeout(() => this.tick(), Math.min(Math.max(0, next - now), this.opts.pollMs));
      this.dueTimer.unref();
    }
    if (now - this.prunedAt >= 10_000 || now < this.prunedAt) {
      this.prunedAt = now;
      try {
        wh.prune(this.opts.keepLog);
      } catch {
        /* busy: next time */
      }
    }
  }

  private async attempt(wh: WebhookStore, d: Delivery): Promise<void> {
    const hook = wh.hook(d.webhookId);
    const attempts = d.attempts + 1;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `tend/${tendVersion()}`,
      'x-tend-event': d.event,
      'x-tend-delivery': String(d.id),
      'x-tend-attempt': String(attempts),
    };
    if (hook?.secret) headers['x-tend-signature'] = `sha256=${nodeCrypto().createHmac('sha256', hook.secret).update(d.payload).digest('hex')}`;
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await fetch(d.url, {
        method: 'POST',
        headers,
        body: d.payload,
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.opts.timeoutMs)]),
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
    } catch (err) {
      if (this.abort.signal.aborted) return; // abandoned by stop(): not an attempt, still queued
      error = describeFetchError(err, this.opts.timeoutMs);
    }
    // An answer that arrived is recorded even while stopping (stop() waits for it).
    if (!this.deps.store.db.open) return;
    const now = this.deps.now();
    if (status !== null && status >= 200 && status < 300) {
      wh.finish(d.id, 'delivered', attempts, status, null, now);
      return;
    }
    if (status !== null && !RETRYABLE(status)) {
      const why = `HTTP ${status}: the receiver refused it (not retried)`;
      if (wh.finish(d.id, 'failed', attempts, status, why, now)) this.giveUpLog(d, why);
      return;
    }
    const why = status !== null ? `HTTP ${status}` : (error ?? 'no answer');
    if (attempts >= this.opts.maxAttempts) {
      const msg = `gave up after ${attempts} attempts; last: ${why}`;
      if (wh.finish(d.id, 'failed', attempts, status, msg, now)) this.giveUpLog(d, msg);
      return;
    }
    const delay = Math.min(this.opts.maxBackoffMs, this.opts.backoffMs * 2 ** (attempts - 1));
    wh.retryLater(d.id, attempts, now + delay, status, `${why}; retry ${attempts + 1} of ${this.opts.maxAttempts} at ${new Date(now + delay).toISOString()}`, now);
  }

  private giveUpLog(d: Delivery, why: string): void {
    this.safeLog({
      type: 'webhook:failed',
      routineId: d.routineId,
      runId: d.runId,
      message: `webhook delivery ${d.id} (${d.event} to ${redactUrl(d.url)}) failed: ${why}`,
      data: { deliveryId: d.id, webhookId: d.webhookId },
    });
  }

  private safeLog(e: NewEvent): void {
    try {
      if (this.deps.store.db.open) this.deps.log(e);
    } catch {
      /* the store is closing */
    }
  }
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (e?.cause?.code) return `${e.cause.code}${e.cause.message ? ` (${e.cause.message})` : ''}`;
  if (e?.cause?.message) return e.cause.message;
  return errorMessage(err);
}
