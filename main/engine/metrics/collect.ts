// What GET /metrics exposes. Everything the store holds is read from it at scrape time (a handful
// of aggregate queries, no per-routine loop); pass durations come from the engine's own passes.
import { BATCH_RUN_STATES } from '../lifecycle/batch-run.js';
import { workerOnline } from '../domain/online.js';
import { REALTIME_RUN_STATES } from '../lifecycle/realtime-run.js';
import type { JobStatus } from '../domain/types.js';
import type { Store } from '../store/store.js';
import { hasWebhookTables, WebhookStore } from '../webhooks/store.js';
import { tendVersion } from '../version.js';
import { Exposition, Histogram, type HistogramSeries, type Sample } from './prom.js';

/** A worker is online when it was heard from this recently (its long poll lasts 25 s). */

export { RUN_DURATION_BOUNDS } from '../store/totals.js';
import { RUN_DURATION_BOUNDS } from '../store/totals.js';
export const PASS_DURATION_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

const JOB_STATUSES: JobStatus[] = ['WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL'];
const ACTIVE = ['PENDING', 'DELAYED', 'STARTING', 'RUNNING'];

/** The order of SQLite's ORDER BY on text (binary), not the locale's. */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Pass statistics of the engine serving the metrics (empty where no loop runs). */
export class PassStats {
  readonly duration = new Histogram(PASS_DURATION_BOUNDS);
  faults = 0;
  lastAt: number | null = null;
  readonly observe = (p: { at: number; durationMs: number; faults: number }): void => {
    this.duration.observe(p.durationMs / 1000);
    this.faults += p.faults;
    this.lastAt = p.at;
  };
}

const routineStates = (kind: 'batch' | 'realtime'): string[] => ['idle', 'paused', ...(kind === 'batch' ? BATCH_RUN_STATES : REALTIME_RUN_STATES).map((s) => s.toLowerCase())];

/** `workerOfflineMs`: the online rule's threshold (Settings.workerOfflineMs). */
export function collectMetrics(store: Store, now: number, pass: PassStats | null, workerOfflineMs: number): string {
  const x = new Exposition();
  const db = store.db;

  x.gauge('tend_build_info', 'Tend build information (always 1).', [{ labels: { version: tendVersion() }, value: 1 }]);

  // Runs by routine and outcome, and durations: totals counted as each run finished (store
  // migration 5), so a scrape reads a row per routine whatever the history, removed runs included.
  const totals = store.history.runTotals();
  const outcomes = totals.map((t) => ({ routine: t.routineId, kind: t.kind, status: t.status, n: t.n }));
  outcomes.sort((a, b) => byText(a.routine, b.routine) || byText(a.status, b.status));
  x.counter(
    'tend_runs_total',
    'Finished runs by routine and outcome (completed, error, cancelled; realtime instances: exited, stopped, error).',
    outcomes.map((r) => ({ labels: { routine: r.routine, kind: r.kind, outcome: r.status.toLowerCase() }, value: r.n })),
  );

  // The statuses spelled out, so the partial index of unfinished runs answers it.
  const active = new Map((db.prepare(`SELECT status, COUNT(*) AS n FROM runs INDEXED BY runs_routine_active WHERE status IN (${ACTIVE.map((s) => `'${s}'`).join(', ')}) GROUP BY status`).all() as { status: string; n: number }[]).map((r) => [r.status, r.n]));
  x.gauge('tend_runs_in_progress', 'Runs not finished yet, by status.', ACTIVE.map((s) => ({ labels: { status: s.toLowerCase() }, value: active.get(s) ?? 0 })));

  const series = new Map<string, HistogramSeries>();
  for (const t of store.history.durationTotals()) {
    let running = 0;
    const cumulative = RUN_DURATION_BOUNDS.map((_, i) => (running += t.buckets[i] ?? 0));
    series.set(t.routineId, { labels: { routine: t.routineId }, cumulative, sum: t.sum, count: t.n });
  }
  x.histogram(
    'tend_run_duration_seconds',
    'Wall-clock duration of batch runs that started and ended, per routine.',
    RUN_DURATION_BOUNDS,
    [...series.values()].sort((a, b) => byText(String(a.labels!['routine']), String(b.labels!['routine']))),
  );

  // Routines by state: paused when its trigger is, else its latest run's status, idle before any run.
  // The latest run is the newest created, kept per routine as runs are written (store/latest.ts).
  const routines = store.runs.newest.states().all() as { kind: 'batch' | 'realtime'; trigger: string | null; latest: string | null }[];
  const byState = new Map<string, number>();
  for (const r of routines) {
    const state = r.trigger === 'paused' ? 'paused' : r.latest ? r.latest.toLowerCase() : 'idle';
    const key = `${r.kind}\u0000${state}`;
    byState.set(key, (byState.get(key) ?? 0) + 1);
  }
  const stateSamples: Sample[] = [];
  for (const kind of ['batch', 'realtime'] as const) {
    for (const state of routineStates(kind)) stateSamples.push({ labels: { kind, state }, value: byState.get(`${kind}\u0000${state}`) ?? 0 });
  }
  x.gauge('tend_routines', 'Routines by kind and state (paused, idle before any run, else the status of the latest run).', stateSamples);

  const jobs = store.jobs.counts();
  x.gauge('tend_batch_jobs', 'One-off batch jobs by status.', JOB_STATUSES.map((s) => ({ labels: { status: s.toLowerCase() }, value: jobs[s] ?? 0 })));

  const ledger = store.ledger.countByBackend();
  if (!ledger.has('local')) ledger.set('local', 0);
  x.gauge('tend_ledger_entries', 'Jobs in flight (submitted handles in the ledger), by backend.', [...ledger].sort(([a], [b]) => a.localeCompare(b)).map(([backend, n]) => ({ labels: { backend }, value: n })));

  const workers = store.pool.workers();
  const online = workers.filter((w) => workerOnline(w.lastSeen, now, workerOfflineMs));
  x.gauge('tend_workers', 'Registered worker hosts.', [{ value: workers.length }]);
  x.gauge('tend_workers_online', `Worker hosts heard from within the last ${workerOfflineMs / 1000} s.`, [{ value: online.length }]);
  x.gauge(
    'tend_worker_last_seen_timestamp_seconds',
    'When each worker host was last heard from (Unix time).',
    workers.filter((w) => w.lastSeen !== null).map((w) => ({ labels: { computer: w.computer }, value: w.lastSeen! / 1000 })),
  );

  const lastOkBy = new Map<string, number>();
  for (const t of totals) if (t.status === 'COMPLETED' && t.lastEndedAt !== null) lastOkBy.set(t.routineId, Math.max(lastOkBy.get(t.routineId) ?? 0, t.lastEndedAt));
  const lastOk = [...lastOkBy].map(([routine, at]) => ({ routine, at }));
  lastOk.sort((a, b) => byText(a.routine, b.routine));
  x.gauge('tend_last_success_timestamp_seconds', 'When each routine last completed a run (Unix time).', lastOk.map((r) => ({ labels: { routine: r.routine }, value: r.at / 1000 })));

  x.histogram('tend_pass_duration_seconds', "Duration of the scheduler's passes since this process started.", PASS_DURATION_BOUNDS, pass ? [pass.duration.series()] : []);
  x.counter('tend_pass_faults_total', 'Faults caught in passes since this process started (each became state, not a crash).', [{ value: pass?.faults ?? 0 }]);
  x.gauge('tend_last_pass_timestamp_seconds', 'When the last pass ran (Unix time); absent before the first.', pass?.lastAt != null ? [{ value: pass.lastAt / 1000 }] : []);

  if (hasWebhookTables(db)) {
    const c = new WebhookStore(db).counts();
    x.gauge('tend_webhook_deliveries', 'Webhook deliveries in the queue (queued) and the log, by state.', Object.entries(c).map(([state, n]) => ({ labels: { state }, value: n })));
  }
  return x.text();
}
