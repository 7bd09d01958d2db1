// What deserves a webhook, read off the logging plane (the events table) and the run rows; which
// events are trouble, and of which kind, is the event catalogue's (events/catalogue.ts):
//   error    a run entered ERROR (failed, could not launch, refused, crash loop, silent external);
//            retries of the same scheduled instance are one notice, not one per attempt
//   delayed  a batch run entered DELAYED (due, not started within its tolerance)
//   restart  a realtime instance died or went silent and Tend starts a new one
//   recover  a routine notified as in trouble is fine again: a batch routine completed a run; a
//            realtime routine has a new instance RUNNING for its startup grace (default 45 s)
// Trouble is kept per routine (webhook_trouble) so a recovery is only announced after a problem.
import type { RoutineDef, RunRow } from '../domain/types.js';
import { recovers, troubleOf } from '../events/catalogue.js';
import type { EventRow } from '../store/events.js';
import type { Store } from '../store/store.js';
import type { WebhookEvent, WebhookStore } from './store.js';

export interface Notice {
  /** Stable id of the notice (the payload's `id`). */
  key: string;
  event: WebhookEvent;
  routineId: string;
  run: RunRow | null;
  def: RoutineDef | null;
  message: string;
  at: number;
  source: { eventId: number | null; type: string | null };
}

/** The notices one event gives (zero or one), updating the trouble state. Call inside a transaction. */
export function noticeFor(store: Store, wh: WebhookStore, e: EventRow): Notice | null {
  // Most events (submitted, running, …) say nothing a receiver hears about: no read for them.
  const trouble = troubleOf(e.type);
  if (!e.routineId || (!trouble && !recovers(e.type))) return null;
  const routineId = e.routineId;
  let read: RunRow | null | undefined;
  const runOf = (): RunRow | null => (read === undefined ? (read = e.runId ? store.runs.get(e.runId) : null) : read);
  const make = (event: WebhookEvent, message: string): Notice => ({
    key: `tend-${e.id}-${event}`,
    event,
    routineId,
    run: runOf(),
    def: store.routines.get(routineId),
    message,
    at: e.at,
    source: { eventId: e.id, type: e.type },
  });

  if (trouble === 'error') {
    const run = runOf();
    if (!run || run.status !== 'ERROR') return null;
    const t = wh.trouble(routineId);
    if (t?.event === 'error' && t.runId && t.runId !== run.id) {
      const prev = store.runs.get(t.runId);
      // Another attempt of the same scheduled instance failed: said already.
      if (prev && prev.kind === 'batch' && run.kind === 'batch' && prev.scheduledAt === run.scheduledAt && prev.cycle === run.cycle && run.attempt > prev.attempt) {
        wh.setTrouble(routineId, 'error', run.id, e.at);
        return null;
      }
    }
    if (t?.event === 'error' && t.runId === run.id) return null; // two events about one failure
    wh.setTrouble(routineId, 'error', run.id, e.at);
    return make('error', `${routineId}: ${e.message}`);
  }
  if (trouble === 'delayed') {
    const run = runOf();
    if (!run || run.status !== 'DELAYED') return null;
    wh.setTrouble(routineId, 'delayed', run.id, e.at);
    return make('delayed', `${routineId}: ${e.message}`);
  }
  if (trouble === 'restart') {
    const run = runOf();
    if (!run || run.kind !== 'realtime') return null;
    wh.setTrouble(routineId, 'restart', run.id, e.at);
    return make('restart', `${routineId} ${e.message}; Tend starts it again`);
  }
  if (recovers(e.type)) {
    const t = wh.trouble(routineId);
    const run = t ? runOf() : null;
    if (!t || !run) return null;
    wh.clearTrouble(routineId);
    return make('recover', `${routineId} recovered: run ${run.id} completed (after ${t.event})`);
  }
  return null;
}

/**
 * Realtime routines in trouble whose current instance has been RUNNING for its startup grace:
 * recovered. Also forgets trouble of routines that no longer exist. Call inside a transaction.
 */
export function stableRecoveries(store: Store, wh: WebhookStore, now: number): Notice[] {
  const out: Notice[] = [];
  for (const t of wh.troubles()) {
    const def = store.routines.get(t.routineId);
    if (!def) {
      wh.clearTrouble(t.routineId);
      continue;
    }
    if (def.kind !== 'realtime') continue;
    // The latest run is newer than the instance the trouble is about (latest orders by creation).
    // Its start is not compared with the trouble's time: a start read from /proc is ±10 ms, and a
    // quick restart can read as a few ms before the death's event.
    const run = store.runs.latest(def.id);
    if (!run || run.id === t.runId || run.status !== 'RUNNING') continue;
    const started = run.startedAt ?? run.createdAt;
    if ((t.runId === null && started < t.since) || now - started < def.graceMs) continue;
    wh.clearTrouble(def.id);
    out.push({
      key: `tend-recover-${run.id}`,
      event: 'recover',
      routineId: def.id,
      run,
      def,
      message: `${def.id} recovered: instance ${run.id} RUNNING for ${Math.round((now - started) / 1000)}s (after ${t.event})`,
      at: now,
      source: { eventId: null, type: null },
    });
  }
  return out;
}
