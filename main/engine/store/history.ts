// What the history retention reads and removes: finished runs and jobs created before a cutoff
// (never the newest run of a routine by run time nor by creation, the ones routine_latest names:
// the second heads the routine's chain of runs, store/chain.ts; never a job another job still depends on), old events and
// commands, and reports of items no longer in flight. What the metrics count of a run was added to
// the totals when it finished (triggers of migration 5), so removing it changes no counter.
import { BATCH_JOB_TERMINAL } from '../lifecycle/batch-job.js';
import { BATCH_RUN_TERMINAL } from '../lifecycle/batch-run.js';
import { REALTIME_RUN_TERMINAL } from '../lifecycle/realtime-run.js';
import type { DB } from './db.js';
import { RunChain } from './chain.js';
import { QUARTER_MS } from './totals.js';

const RUN_TERMINAL = [...new Set<string>([...BATCH_RUN_TERMINAL, ...REALTIME_RUN_TERMINAL])];
const inList = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');

function prepare(db: DB) {
  return {
    // Oldest first in the chains' order (store/chain.ts: a run removed before the runs after it leaves no link behind).
    oldRuns: db.prepare(`SELECT r.rowid AS rid, r.id, r.routine_id, r.kind, r.status, r.backend, r.run_dir, r.started_at, r.ended_at FROM runs r
      WHERE r.created_at < @cutoff AND COALESCE(r.ended_at, r.created_at) < @cutoff AND r.status IN (${inList(RUN_TERMINAL)})
        AND NOT EXISTS (SELECT 1 FROM routine_latest l WHERE l.routine_id = r.routine_id AND r.rowid IN (l.run_rowid, l.created_rowid))
      ORDER BY r.created_at, r.rowid LIMIT @limit`),
    deleteRun: db.prepare(`DELETE FROM runs WHERE id = ?`),
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
    // The quarters of the day counts (migration 7) before the cutoff, and from then on the table holds
    // only what follows: a day asked for before it is counted from the runs (store/runs.ts).
    quarters: db.prepare(`DELETE FROM run_quarter_totals WHERE quarter < @q`),
    // A cycle's kept newest run (migration 12) once the retention removed it, looked for among the
    // cycles over before the cutoff in every zone: the kept days' rows are not read.
    cycles: db.prepare(`DELETE FROM routine_cycles WHERE cycle < @day AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.rowid = routine_cycles.run_rowid)`),
    quartersFrom: db.prepare(`UPDATE meta SET value = CAST(@q AS TEXT) WHERE key = 'run_quarters_from' AND CAST(value AS INTEGER) < @q`),
    runTotals: db.prepare(`SELECT routine_id, kind, status, n, last_ended_at FROM run_totals ORDER BY routine_id, status`),
    durationTotals: db.prepare(`SELECT * FROM run_duration_totals ORDER BY routine_id`),
  };
}

export interface OldRun {
  rid: number;
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
  private chain: RunChain | undefined;
  constructor(private readonly db: DB) {}

  /** Prepared on first use: a read-only open of an older database never needs these tables. */
  private get s(): ReturnType<typeof prepare> {
    return (this.stmts ??= prepare(this.db));
  }


  /** Finished runs created and ended before `cutoff`, oldest first; the latest run of each routine is kept. */
  oldRuns(cutoff: number, limit: number): OldRun[] {
    return (this.s.oldRuns.all({ cutoff, limit }) as Record<string, unknown>[]).map((r) => ({
      rid: r['rid'] as number,
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

  /** Caller holds the transaction; `runs` as oldRuns gave them (oldest first). */
  removeRuns(runs: readonly OldRun[]): void {
    const chain = (this.chain ??= new RunChain(this.db));
    for (const r of runs) {
      chain.removing(r);
      this.s.deleteRun.run(r.id);
    }
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

  /** The day counts' quarters that begin before `cutoff` (a few hundred a day). Caller holds the transaction. */
  pruneQuarters(cutoff: number): number {
    const q = Math.floor(cutoff / QUARTER_MS);
    this.s.quartersFrom.run({ q });
    return this.s.quarters.run({ q }).changes;
  }

  /** The kept newest runs of cycles before `cutoff` whose run was removed. Caller holds the transaction. */
  pruneCycles(cutoff: number): number {
    return this.s.cycles.run({ day: new Date(cutoff - 14 * 3_600_000).toISOString().slice(0, 10) }).changes;
  }

  /** Finished runs by routine, kind and outcome, since the first (removed ones included). */
  runTotals(): RunTally[] {
    return (this.s.runTotals.all() as { routine_id: string; kind: string; status: string; n: number; last_ended_at: number | null }[]).map((r) => ({
      routineId: r.routine_id,
      kind: r.kind,
      status: r.status,
      n: r.n,
      lastEndedAt: r.last_ended_at,
    }));
  }

  /** Durations of finished batch runs that ran, per routine (removed ones included). */
  durationTotals(): DurationTally[] {
    return (this.s.durationTotals.all() as Record<string, number | string>[]).map((r) => {
      const buckets: number[] = [];
      for (let i = 0; `b${i}` in r; i++) buckets.push(Number(r[`b${i}`]));
      return { routineId: String(r['routine_id']), buckets, sum: Number(r['sum']), n: Number(r['n']) };
    });
  }
}
