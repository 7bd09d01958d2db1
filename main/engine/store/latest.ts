// The newest run of each routine (routine_latest, migration 9), by run time and by creation, written
// as runs are inserted: the routine list and the metrics read one row per routine instead of seeking
// each routine's newest run through runs_routine / runs_routine_created, whose paths deepen (and
// whose pages fill the page cache) as history grows. Since migration 11 it is the only way to the
// newest run by run time (runs_routine is gone): it holds a row for every routine with runs.
import type Database from 'better-sqlite3';
import { writeAtCommit } from './after-commit.js';
import { hasTable, type DB } from './db.js';
import { MultiRow } from './multi-row.js';

interface Inserted {
  routineId: string;
  scheduledAt: number;
  createdAt: number;
  rowid: number;
}

/** The seeks the kept rows replace (`d` is the routine): what an older database without them (opened read-only) is answered by. */
const BY_RUN_TIME = `SELECT x.rowid FROM runs x WHERE x.routine_id = d.id ORDER BY x.scheduled_at DESC, x.rowid DESC LIMIT 1`;
const BY_CREATION = `SELECT x.rowid FROM runs x INDEXED BY runs_routine_created WHERE x.routine_id = d.id ORDER BY x.created_at DESC, x.rowid DESC LIMIT 1`;
/**
 * A routine's newest run by creation as routine_latest names it (`routine`: an SQL expression of its
 * id). The retention never removes it (store/history.ts), so since runs_routine_created went
 * (migration 14) it is also how a routine whose kept newest run by run time is missing (a row
 * written behind the store's back) is answered: its newest by run time unless its newest was a
 * catch-up or a retry.
 */
export const NEWEST_CREATED = (routine: string) =>
  `SELECT y.rowid FROM routine_latest k JOIN runs y ON y.rowid = k.created_rowid WHERE k.routine_id = ${routine} AND y.routine_id = ${routine}`;

const newer = (at: string, rowid: string) => `excluded.${at} > ${at} OR (excluded.${at} = ${at} AND excluded.${rowid} > ${rowid})`;

export class RoutineLatest {
  private readonly upsert: MultiRow<Inserted>;
  private readonly statements = new Map<string, Database.Statement>();
  private kept: boolean | undefined;
  private chained: boolean | undefined;

  constructor(private readonly db: DB) {
    // SET reads the row as it was; a later row of the same routine in one statement sees the earlier one's update.
    this.upsert = new MultiRow<Inserted>(
      db,
      '(?, ?, ?, ?, ?)',
      (values) => `INSERT INTO routine_latest (routine_id, scheduled_at, run_rowid, created_at, created_rowid) VALUES ${values}
      ON CONFLICT (routine_id) DO UPDATE SET
        run_rowid = CASE WHEN ${newer('scheduled_at', 'run_rowid')} THEN excluded.run_rowid ELSE run_rowid END,
        scheduled_at = MAX(scheduled_at, excluded.scheduled_at),
        created_rowid = CASE WHEN ${newer('created_at', 'created_rowid')} THEN excluded.created_rowid ELSE created_rowid END,
        created_at = MAX(created_at, excluded.created_at)`,
      (r) => [r.routineId, r.scheduledAt, r.rowid, r.createdAt, r.rowid],
    );
  }

  /** A run was inserted: written with the others its transaction inserts, as it ends. */
  inserted(routineId: string, scheduledAt: number, createdAt: number, rowid: number): void {
    writeAtCommit(this.db, this.write, { routineId, scheduledAt, createdAt, rowid });
  }

  private readonly write = (rows: Inserted[]): void => this.upsert.run(rows);

  /**
   * The rowid of routine `d`'s newest run (an SQL expression): the kept row's, checked against the
   * run it names. By run time, a routine whose row names no run of its own is answered by its newest
   * by creation (NEWEST_CREATED); every routine of an older database opened read-only, which has
   * no routine_latest, is sought as before.
   */
  newestRowid(order: 'runTime' | 'creation'): string {
    this.kept ??= hasTable(this.db, 'routine_latest');
    this.chained ??= hasTable(this.db, 'run_links');
    if (!this.kept) return `(${order === 'runTime' ? BY_RUN_TIME : BY_CREATION})`;
    // Before migration 14 (an older database opened read-only), runs_routine_created answers what the kept row does not.
    const byCreation = this.chained ? NEWEST_CREATED('d.id') : BY_CREATION;
    if (order === 'creation') return `(${byCreation})`;
    return `COALESCE((SELECT y.rowid FROM routine_latest l JOIN runs y ON y.rowid = l.run_rowid WHERE l.routine_id = d.id AND y.routine_id = d.id), (${byCreation}))`;
  }

  /** Every defined routine's newest run by run time. */
  perRoutine(): Database.Statement {
    return this.prepared(`SELECT r.* FROM routines d JOIN runs r ON r.rowid = ${this.newestRowid('runTime')}`);
  }

  /** One routine's newest run by run time (bind its id). */
  ofRoutine(): Database.Statement {
    return this.prepared(`SELECT r.* FROM (SELECT ? AS id) d JOIN runs r ON r.rowid = ${this.newestRowid('runTime')}`);
  }

  /** Every defined routine's kind, trigger state and the status of its newest run by creation (null before any). */
  states(): Database.Statement {
    return this.prepared(`SELECT d.kind, t.state AS trigger, (SELECT r.status FROM runs r WHERE r.rowid = ${this.newestRowid('creation')}) AS latest
      FROM routines d LEFT JOIN triggers t ON t.routine_id = d.id`);
  }

  private prepared(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }
}
