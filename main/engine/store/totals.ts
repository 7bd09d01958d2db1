// What the metrics count of finished runs, kept as totals (run_totals, run_duration_totals of
// migration 5) and added to as each run finishes, so a scrape never reads the history and the
// retention can remove runs without a counter going down. Plain statements, not triggers: an
// AFTER trigger on runs made every insert and update of a run cost about three times as much.
import type { DB } from './db.js';

/** Upper bounds (seconds) of the run-duration histogram: one column per bucket, then +Inf. */
export const RUN_DURATION_BOUNDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400] as const;

export const RUN_TERMINAL = new Set(['COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED']);

const BUCKETS = RUN_DURATION_BOUNDS.map((_, i) => `b${i}`).concat(`b${RUN_DURATION_BOUNDS.length}`);
const bucketOf = (d: string) => `CASE ${RUN_DURATION_BOUNDS.map((b, i) => `WHEN ${d} <= ${b} THEN ${i}`).join(' ')} ELSE ${RUN_DURATION_BOUNDS.length} END`;

export class RunTotals {
  private readonly outcome;
  private readonly duration;

  constructor(db: DB) {
    this.outcome = db.prepare(`INSERT INTO run_totals (routine_id, kind, status, n, last_ended_at)
      SELECT routine_id, kind, status, 1, CASE WHEN status = 'COMPLETED' THEN ended_at END FROM runs WHERE id = ?
      ON CONFLICT (routine_id, kind, status) DO UPDATE SET n = n + 1,
        last_ended_at = CASE WHEN excluded.last_ended_at IS NULL THEN last_ended_at WHEN last_ended_at IS NULL THEN excluded.last_ended_at
          ELSE MAX(last_ended_at, excluded.last_ended_at) END`);
    this.duration = db.prepare(`INSERT INTO run_duration_totals (routine_id, ${BUCKETS.join(', ')}, sum, n)
      SELECT routine_id, ${BUCKETS.map((_, i) => `bk = ${i}`).join(', ')}, d, 1 FROM (
        SELECT routine_id, d, ${bucketOf('d')} AS bk FROM (
          SELECT routine_id, MAX(0, ended_at - started_at) / 1000.0 AS d FROM runs
          WHERE id = ? AND kind = 'batch' AND started_at IS NOT NULL AND ended_at IS NOT NULL))
      WHERE true
      ON CONFLICT (routine_id) DO UPDATE SET ${BUCKETS.map((b) => `${b} = ${b} + excluded.${b}`).join(', ')}, sum = sum + excluded.sum, n = n + excluded.n`);
  }

  /** Count a run that has just finished (its row holds the outcome). Caller holds the transaction. */
  finished(id: string): void {
    this.outcome.run(id);
    this.duration.run(id);
  }
}
