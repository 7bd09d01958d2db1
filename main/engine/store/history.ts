// What the history retention reads and removes: finished runs and jobs created before a cutoff
// (never the latest run of a routine, never a job another job still depends on), old events and
// commands, and reports of items no longer in flight. Removed runs
// are added to tallies first, so the metrics' counters and histograms never go down.
import { BATCH_JOB_TERMINAL } from '../lifecycle/batch-job.js';
import { BATCH_RUN_TERMINAL } from '../lifecycle/batch-run.js';
import { REALTIME_RUN_TERMINAL } from '../lifecycle/realtime-run.js';
import type { DB } from './db.js';

const RUN_TERMINAL = [...new Set<string>([...BATCH_RUN_TERMINAL, ...REALTIME_RUN_TERMINAL])];
const inList = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');

function prepare(db: DB) {
  return {
    oldRuns: db.prepare(`SELECT r.id, r.routine_id, r.kind, r.status, r.backend, r.run_dir, r.started_at, r.ended_at FROM runs r
      WHERE r.created_at < @cutoff AND COALESCE(r.ended_at, r.created_at) < @cutoff AND r.status IN (${inList(RUN_TERMINAL)})
        AND r.rowid <> (SELECT x.rowid FROM runs x WHERE x.routine_id = r.routine_id ORDER BY x.scheduled_at DESC, x.rowid DESC LIMIT 1)
      ORDER BY r.created_at LIMIT @limit`),
    deleteRun: db.prepare(`DELETE FROM runs WHERE id = ?`),
    addRunTally: db.prepare(`INSERT INTO run_tallies (routine_id, kind, status, n, last_ended_at) VALUES (@routineId, @kind, @status, @n, @lastEndedAt)
      ON CONFLICT (routine_id, kind, status) DO UPDATE SET n = n + excluded.n,
        last_ended_at = CASE WHEN excluded.last_ended_at IS NULL THEN last_ended_at WHEN last_ended_at IS NULL THEN excluded.last_ended_at
          ELSE MAX(last_ended_at, excluded.last_ended_at) END`),
    durationTally: db.prepare(`SELECT buckets, sum, n FROM duration_tallies WHERE routine_id = ?`),
    putDurationTally: db.prepare(`INSERT INTO duration_tallies (routine_id, buckets, sum, n) VALUES (?, ?, ?, ?)
      ON CONFLICT (routine_id) DO UPDATE SET buckets = excluded.buckets, sum = excluded.sum, n = excluded.n`),
    oldJobs: db.prepare(`SELECT id, backend, run_dir FROM jobs
      WHERE created_at < @cutoff AND COALESCE(ended_at, updated_at) < @cutoff AND status IN (${inList(BATCH_JOB_TERMINAL)})
      ORDER BY id DESC LIMIT @limit`),
    hasDependents: db.prepare(`SELECT 1 FROM job_deps WHERE depends_on = ? LIMIT 1`).pluck(),
    deleteJob: db.prepare(`DELETE FROM jobs WHERE id = ?`),
    events: db.prepare(`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE at < ? ORDER BY at LIMIT ?)`),
    // A command lives a minute: anything created before the cutoff has long been fetched or expired.
    commands: db.prepare(`DELETE FROM commands WHERE id IN (SELECT id FROM commands WHERE created_at < @cutoff AND expires_at < @cutoff LIMIT @limit)`),
    reports: db.prepare(`DELETE FROM remote_runs WHERE rowid IN (SELECT m.rowid FROM remote_runs m WHERE m.updated_at < ?
      AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.kind = m.kind AND l.ref_id = m.ref_id) LIMIT ?)`),
    runTallies: db.prepare(`SELECT routine_id, kind, status, n, last_ended_at FROM run_tallies ORDER BY routine_id, status`),
    durationTallies: db.prepare(`SELECT routine_id, buckets, sum, n FROM duration_tallies ORDER BY routine_id`),
  };
}

export interface OldRun {
  id: string;
  routineId: string;
  kind: 'batch' | 'realtime';
  status: string;
  backend: string | null;
  runDir: string | null;
  startedAt: number | null;
  endedAt: number | null;
}

export interface OldJob {
  id: number;
  backend: string | null;
  runDir: string | null;
}

export interface RunTally {
  routineId: string;
  kind: string;
  status: string;
  n: number;
  lastEndedAt: number | null;
}

export interface DurationTally {
  routineId: string;
  /** Per bucket (one per bound, then +Inf), not cumulative. */
  buckets: number[];
  sum: number;
  n: number;
}

export class HistoryStore {
  private stmts: ReturnType<typeof prepare> | null = null;
  constructor(private readonly db: DB) {}

  /** Prepared on first use: a read-only open of an older database never needs these tables. */
  private get s(): ReturnType<typeof prepare> {
    return (this.stmts ??= prepare(this.db));
  }


  /** Finished runs created and ended before `cutoff`, oldest first; the latest run of each routine is kept. */
  oldRuns(cutoff: number, limit: number): OldRun[] {
    return (this.s.oldRuns.all({ cutoff, limit }) as Record<string, unknown>[]).map((r) => ({
      id: r['id'] as string,
      routineId: r['routine_id'] as string,
      kind: r['kind'] as 'batch' | 'realtime',
      status: r['status'] as string,
      backend: r['backend'] as string | null,
      runDir: r['run_dir'] as string | null,
      startedAt: r['started_at'] as number | null,
      endedAt: r['ended_at'] as number | null,
    }));
  }

  /** Tally then delete. `bounds` are the duration histogram's upper bounds in seconds. Caller holds the transaction. */
  removeRuns(runs: readonly OldRun[], bounds: readonly number[]): void {
    const tallies = new Map<string, RunTally>();
    const durations = new Map<string, { buckets: number[]; sum: number; n: number }>();
    for (const r of runs) {
      const key = `${r.routineId}\u0000${r.kind}\u0000${r.status}`;
      const t = tallies.get(key) ?? { routineId: r.routineId, kind: r.kind, status: r.status, n: 0, lastEndedAt: null };
      t.n++;
      if (r.status === 'COMPLETED' && r.endedAt !== null) t.lastEndedAt = Math.max(t.lastEndedAt ?? 0, r.endedAt);
      tallies.set(key, t);
      if (r.kind === 'batch' && r.startedAt !== null && r.endedAt !== null) {
        const d = durations.get(r.routineId) ?? this.durationOf(r.routineId, bounds.length + 1);
        const seconds = Math.max(0, r.endedAt - r.startedAt) / 1000;
        const i = bounds.findIndex((b) => seconds <= b);
        d.buckets[i < 0 ? bounds.length : i]!++;
        d.sum += seconds;
        d.n++;
        durations.set(r.routineId, d);
      }
      this.s.deleteRun.run(r.id);
    }
    for (const t of tallies.values()) this.s.addRunTally.run(t);
    for (const [routineId, d] of durations) this.s.putDurationTally.run(routineId, JSON.stringify(d.buckets), d.sum, d.n);
  }

  private durationOf(routineId: string, size: number): { buckets: number[]; sum: number; n: number } {
    const row = this.s.durationTally.get(routineId) as { buckets: string; sum: number; n: number } | undefined;
    const buckets = row ? (JSON.parse(row.buckets) as number[]) : [];
    return { buckets: Array.from({ length: size }, (_, i) => buckets[i] ?? 0), sum: row?.sum ?? 0, n: row?.n ?? 0 };
  }

  /** Finished jobs created and ended before `cutoff`, newest first (so a dependent goes before what it depended on). */
  oldJobs(cutoff: number, limit: number): OldJob[] {
    return (this.s.oldJobs.all({ cutoff, limit }) as { id: number; backend: string | null; run_dir: string | null }[]).map((j) => ({ id: j.id, backend: j.backend, runDir: j.run_dir }));
  }

  /** False, and nothing removed, while another job still names it as a dependency. */
  removeJob(id: number): boolean {
    if (this.s.hasDependents.get(id)) return false;
    return this.s.deleteJob.run(id).changes > 0;
  }

  pruneEvents(cutoff: number, limit: number): number {
    return this.s.events.run(cutoff, limit).changes;
  }

  pruneCommands(cutoff: number, limit: number): number {
    return this.s.commands.run({ cutoff, limit }).changes;
  }

  pruneReports(cutoff: number, limit: number): number {
    return this.s.reports.run(cutoff, limit).changes;
  }

  runTallies(): RunTally[] {
    return (this.s.runTallies.all() as { routine_id: string; kind: string; status: string; n: number; last_ended_at: number | null }[]).map((r) => ({
      routineId: r.routine_id,
      kind: r.kind,
      status: r.status,
      n: r.n,
      lastEndedAt: r.last_ended_at,
    }));
  }

  durationTallies(): DurationTally[] {
    return (this.s.durationTallies.all() as { routine_id: string; buckets: string; sum: number; n: number }[]).map((r) => ({
      routineId: r.routine_id,
      buckets: JSON.parse(r.buckets) as number[],
      sum: r.sum,
      n: r.n,
    }));
  }
}
