// `tend daemon status`: ownership, heartbeat freshness, queue counts, next due work, recent
// failures. Reads the state file and the database (read-only); starts nothing.
import { existsSync } from 'node:fs';
import { dayBounds } from '../timing/day.js';
import { paths } from '../datadir.js';
import type { Store } from '../store/store.js';
import { isLiveOwner, readPidRecord } from './ownership.js';
import { heartbeatFresh, readState, type DaemonState } from './state.js';
import { webhookStatus, type WebhookStatus } from '../webhooks/status.js';

export interface DaemonStatus {
  dataDir: string;
  healthy: boolean;
  owner: { pid: number; kind: string; alive: boolean; startedAt: string } | null;
  heartbeat: { last: string | null; ageMs: number | null; fresh: boolean };
  version: string | null;
  api: { url: string } | null;
  runs: Record<string, number>;
  jobs: Record<string, number>;
  inFlight: number;
  nextDue: { routineId: string; at: string } | null;
  recentFailures: { routineId: string; runId: string; at: string; reason: string | null }[];
  lastPass: DaemonState['lastPass'];
  /** Backends the live daemon holds paused, with why: nothing fails, their work waits. */
  pausedBackends: Record<string, string>;
  /** History retention of the owning daemon (null before a daemon wrote it). */
  history: NonNullable<DaemonState['history']> | null;
  /** Receivers, queue and log counts, the latest deliveries (null without a database). */
  webhooks: WebhookStatus | null;
}

export function daemonStatus(dataDir: string, store: Store | null, now: number): DaemonStatus {
  const rec = readPidRecord(dataDir);
  const alive = isLiveOwner(rec);
  const state = readState(dataDir);
  const fresh = alive && state?.pid === rec?.pid && heartbeatFresh(state, now);
  const last = state?.lastHeartbeat ?? null;
  let runs: Record<string, number> = {};
  let jobs: Record<string, number> = {};
  let inFlight = 0;
  let nextDue: DaemonStatus['nextDue'] = null;
  let recentFailures: DaemonStatus['recentFailures'] = [];
  let webhooks: WebhookStatus | null = null;
  if (store) {
    runs = store.runs.countByStatus(dayBounds(now).from);
    jobs = store.jobs.counts();
    inFlight = store.ledger.count();
    const row = store.db.prepare(`SELECT routine_id, next_run_at FROM triggers WHERE state = 'scheduled' AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1`).get() as
      | { routine_id: string; next_run_at: number }
      | undefined;
    if (row) nextDue = { routineId: row.routine_id, at: new Date(row.next_run_at).toISOString() };
    webhooks = webhookStatus(store);
    recentFailures = store.runs.failures(10).map((r) => ({ routineId: r.routineId, runId: r.id, at: new Date(r.endedAt ?? r.createdAt).toISOString(), reason: r.reason }));
  }
  return {
    dataDir,
    healthy: alive && fresh,
    owner: rec ? { pid: rec.pid, kind: rec.kind, alive, startedAt: rec.startedAt } : null,
    heartbeat: { last, ageMs: last ? now - Date.parse(last) : null, fresh },
    version: state?.version ?? null,
    api: alive ? (state?.api ?? null) : null,
    runs,
    jobs,
    inFlight,
    nextDue,
    recentFailures,
    lastPass: state?.lastPass ?? null,
    pausedBackends: fresh ? (state?.pausedBackends ?? {}) : {},
    history: state?.history ?? null,
    webhooks,
  };
}

export function hasDatabase(dataDir: string): boolean {
  return existsSync(paths(dataDir).db);
}
