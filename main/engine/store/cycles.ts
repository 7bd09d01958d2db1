// The newest run of each routine in each cycle (routine_cycles, migration 12), written as runs are
// inserted: a dependency's run of the day (the pass's check of what waits) reads one row instead of
// seeking runs_routine_cycle, an index with a leaf of its own per routine that every insert wrote
// deep in a B-tree that deepens with history. The table is keyed by cycle first, so the rows the
// pass writes (today's, one per routine) sit on a few pages whatever the history.
import type Database from 'better-sqlite3';
import { writeAtCommit } from './after-commit.js';
import { hasTable, type DB } from './db.js';
import { MultiRow } from './multi-row.js';

interface Inserted {
  cycle: string;
  routineId: string;
  scheduledAt: number;
  createdAt: number;
  rowid: number;
}

/** Newer in a cycle: by run time, then creation, then insertion (latestInCycle's order). */
const NEWER = `excluded.scheduled_at > scheduled_at OR (excluded.scheduled_at = scheduled_at
  AND (excluded.created_at > created_at OR (excluded.created_at = created_at AND excluded.run_rowid > run_rowid)))`;

export class RoutineCycles {
  private readonly upsert: MultiRow<Inserted>;
  private read: Database.Statement | undefined;

  constructor(private readonly db: DB) {
    // A later row of the same routine and cycle in one statement sees the earlier one's update.
    this.upsert = new MultiRow<Inserted>(
      db,
      '(?, ?, ?, ?, ?)',
      (values) => `INSERT INTO routine_cycles (cycle, routine_id, scheduled_at, created_at, run_rowid) VALUES ${values}
      ON CONFLICT (cycle, routine_id) DO UPDATE SET scheduled_at = excluded.scheduled_at, created_at = excluded.created_at, run_rowid = excluded.run_rowid
      WHERE ${NEWER}`,
      (r) => [r.cycle, r.routineId, r.scheduledAt, r.createdAt, r.rowid],
    );
  }

  /** A run was inserted: written with the others its transaction inserts, as it ends. */
  inserted(row: Inserted): void {
    writeAtCommit(this.db, this.write, row);
  }

  private readonly write = (rows: Inserted[]): void => this.upsert.run(rows);

  /**
   * The statement of a routine's newest run in a cycle (bind `{ routine, cycle }`). Null when the retention
   * has removed that run (a cycle older than the kept days). An older database opened read-only,
   * without the table, seeks runs_routine_cycle as before.
   */
  latestIn(): Database.Statement {
    return (this.read ??= hasTable(this.db, 'routine_cycles')
      ? this.db.prepare(`SELECT r.* FROM routine_cycles c JOIN runs r ON r.rowid = c.run_rowid WHERE c.cycle = @cycle AND c.routine_id = @routine AND r.routine_id = @routine`)
      : this.db.prepare(`SELECT * FROM runs WHERE routine_id = @routine AND cycle = @cycle ORDER BY scheduled_at DESC, created_at DESC, rowid DESC LIMIT 1`));
  }
}
