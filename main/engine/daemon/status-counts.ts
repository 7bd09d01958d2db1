// The database part of `tend daemon status`: today's runs, jobs, the ledger, next due work, recent
// failures and webhook deliveries. The owning daemon writes it into daemon.state.json when the
// database changed (statusCountsKeeper), so `status --json` of a live daemon opens no database;
// without a live daemon, status reads it from the file itself (read-only).
import type { Store } from '../store/store.js';
import { machineDayBounds } from '../timing/day.js';
import { webhookStatus, type WebhookStatus } from '../webhooks/status.js';

export interface StatusCounts {
  runs: Record<string, number>;
  jobs: Record<string, number>;
  inFlight: number;
  nextDue: { routineId: string; at: string } | null;
  recentFailures: { routineId: string; runId: string; at: string; reason: string | null }[];
  /** Receivers, queue and log counts, the latest deliveries. */
  webhooks: WebhookStatus | null;
}

/** StatusCounts as the daemon saw them, and until when `runs` (today's) holds: the next local midnight. */
export interface SavedStatusCounts extends StatusCounts {
  at: string;
  validUntil: number;
}

export function statusCounts(store: Store, now: number): StatusCounts & { dayEnds: number } {
  const day = machineDayBounds(now);
  const row = store.db.prepare(`SELECT routine_id, next_run_at FROM triggers WHERE state = 'scheduled' AND next_run_at IS NOT NULL ORDER BY next_run_at LIMIT 1`).get() as
    | { routine_id: string; next_run_at: number }
    | undefined;
  return {
    runs: store.runs.countByStatus(day.from),
    jobs: store.jobs.counts(),
    inFlight: store.ledger.count(),
    nextDue: row ? { routineId: row.routine_id, at: new Date(row.next_run_at).toISOString() } : null,
    recentFailures: store.runs.failures(10).map((r) => ({ routineId: r.routineId, runId: r.id, at: new Date(r.endedAt ?? r.createdAt).toISOString(), reason: r.reason })),
    webhooks: webhookStatus(store),
    dayEnds: day.to,
  };
}

/** The owner's copy of StatusCounts: `changed` is two tiny statements, `count` recounts only after a change. */
export interface StatusCountsKeeper {
  /**
   * Whether the database changed since the last count (a commit by another connection moves
   * `data_version`, one of ours `total_changes()`) or the day turned.
   */
  changed(now: number): boolean;
  count(now: number): SavedStatusCounts;
}

export function statusCountsKeeper(store: Store): StatusCountsKeeper {
  const version = store.db.prepare('PRAGMA data_version').pluck();
  const changes = store.db.prepare('SELECT total_changes()').pluck();
  const markNow = () => `${String(version.get())}:${String(changes.get())}`;
  let mark = '';
  let saved: SavedStatusCounts | null = null;
  const changed = (now: number) => !saved || markNow() !== mark || now >= saved.validUntil;
  return {
    changed,
    count(now) {
      if (saved && !changed(now)) return saved;
      mark = markNow();
      const { dayEnds, ...counts } = statusCounts(store, now);
      saved = { ...counts, at: new Date(now).toISOString(), validUntil: dayEnds };
      return saved;
    },
  };
}
