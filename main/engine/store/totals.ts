// What the metrics count of finished runs, kept as totals (run_totals, run_duration_totals of
// migration 5) and added to as each run finishes, so a scrape never reads the history and the
// retention can remove runs without a counter going down. Plain statements, not triggers: an
// AFTER trigger on runs made every insert and update of a run cost about three times as much.
import { writeAtCommit } from './after-commit.js';
import type { DB } from './db.js';
import { MultiRow } from './multi-row.js';

/** Upper bounds (seconds) of the run-duration histogram: one column per bucket, then +Inf. */
export const RUN_DURATION_BOUNDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400] as const;

export const RUN_TERMINAL = new Set(['COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED']);

const BUCKETS = RUN_DURATION_BOUNDS.map((_, i) => `b${i}`).concat(`b${RUN_DURATION_BOUNDS.length}`);
const bucketOf = (d: string) => `CASE ${RUN_DURATION_BOUNDS.map((b, i) => `WHEN ${d} <= ${b} THEN ${i}`).join(' ')} ELSE ${RUN_DURATION_BOUNDS.length} END`;

/** Runs are counted by the quarter-hour they were created in (run_quarter_totals, migration 7). */
export const QUARTER_MS = 900_000;

/** What the totals count of a finished run: its row as it finished. */
export interface FinishedRun {
  routine_id: string;
  kind: string;
  status: string;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
}

export class RunTotals {
  private readonly outcome: MultiRow<FinishedRun>;
  private readonly duration: MultiRow<{ routineId: string; seconds: number }>;
  private readonly quarters: MultiRow<{ quarter: number; status: string; n: number }>;

  constructor(private readonly db: DB) {
    this.outcome = new MultiRow<FinishedRun>(
      db,
      '(?, ?, ?, 1, ?)',
      (values) => `INSERT INTO run_totals (routine_id, kind, status, n, last_ended_at) VALUES ${values}
      ON CONFLICT (routine_id, kind, status) DO UPDATE SET n = n + 1,
        last_ended_at = CASE WHEN excluded.last_ended_at IS NULL THEN last_ended_at WHEN last_ended_at IS NULL THEN excluded.last_ended_at
          ELSE MAX(last_ended_at, excluded.last_ended_at) END`,
      (r) => [r.routine_id, r.kind, r.status, r.status === 'COMPLETED' ? r.ended_at : null],
    );
    this.duration = new MultiRow<{ routineId: string; seconds: number }>(
      db,
      '(?, ?)',
      (values) => `INSERT INTO run_duration_totals (routine_id, ${BUCKETS.join(', ')}, sum, n)
      SELECT routine_id, ${BUCKETS.map((_, i) => `bk = ${i}`).join(', ')}, d, 1 FROM (
        SELECT column1 AS routine_id, column2 AS d, ${bucketOf('column2')} AS bk FROM (VALUES ${values}))
      WHERE true
      ON CONFLICT (routine_id) DO UPDATE SET ${BUCKETS.map((b) => `${b} = ${b} + excluded.${b}`).join(', ')}, sum = sum + excluded.sum, n = n + excluded.n`,
      (r) => [r.routineId, r.seconds],
    );
    this.quarters = new MultiRow<{ quarter: number; status: string; n: number }>(
      db,
      '(?, ?, ?)',
      (values) => `INSERT INTO run_quarter_totals (quarter, status, n) VALUES ${values} ON CONFLICT (quarter, status) DO UPDATE SET n = n + excluded.n`,
      (q) => [q.quarter, q.status, q.n],
    );
  }

  /**
   * Count a run that has just finished, as its transaction ends with the other runs it finished
   * (three multi-row upserts per transaction, not three statements per run); at once outside one.
   */
  finished(run: FinishedRun): void {
    writeAtCommit(this.db, this.countAll, run);
  }

  private readonly countAll = (runs: FinishedRun[]): void => {
    this.outcome.run(runs);
    // The runs a transaction finished fall in a quarter or two: a row per quarter and outcome, not per run.
    const quarters = new Map<string, { quarter: number; status: string; n: number }>();
    for (const r of runs) {
      const quarter = Math.floor(r.created_at / QUARTER_MS);
      const key = `${quarter}|${r.status}`;
      const q = quarters.get(key);
      if (q) q.n++;
      else quarters.set(key, { quarter, status: r.status, n: 1 });
    }
    this.quarters.run([...quarters.values()]);
    const timed = runs.filter((r) => r.kind === 'batch' && r.started_at !== null && r.ended_at !== null);
    this.duration.run(timed.map((r) => ({ routineId: r.routine_id, seconds: Math.max(0, r.ended_at! - r.started_at!) / 1000 })));
  };
}
