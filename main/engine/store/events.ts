import { eventProblems, specOf, type EventData, type EventType } from '../events/catalogue.js';
import { afterCommit, writeAtCommit } from './after-commit.js';
import type Database from 'better-sqlite3';
import { hasIndex, type DB } from './db.js';
import { MultiRow } from './multi-row.js';

interface Pending {
  row: EventRow;
  data: string | null;
}

export type Level = 'info' | 'warn' | 'error';

export interface EventRow {
  id: number;
  at: number;
  type: string; // noun:verb
  level: Level;
  routineId: string | null;
  runId: string | null;
  jobId: number | null;
  message: string;
  data: Record<string, unknown> | null;
}

/** An event to append: a type of the catalogue with the data that type carries. */
export type NewEvent = {
  [T in EventType]: {
    type: T;
    /** Unset: the catalogue's level for the type. */
    level?: Level;
    routineId?: string | null;
    runId?: string | null;
    jobId?: number | null;
    message: string;
    data?: EventData<T> | null;
  };
}[EventType];

/** An event that does not match the catalogue: a programming error, refused before anything is written. */
export class EventShapeError extends Error {
  constructor(readonly problems: string[]) {
    super(`event refused: ${problems.join('; ')}`);
    this.name = 'EventShapeError';
  }
}

interface EventRecord {
  id: number;
  at: number;
  type: string;
  level: Level;
  routine_id: string | null;
  run_id: string | null;
  job_id: number | null;
  message: string;
  data: string | null;
}

const toEvent = (r: EventRecord): EventRow => ({
  id: r.id,
  at: r.at,
  type: r.type,
  level: r.level,
  routineId: r.routine_id,
  runId: r.run_id,
  jobId: r.job_id,
  message: r.message,
  data: r.data ? (JSON.parse(r.data) as Record<string, unknown>) : null,
});

/**
 * The append-only logging plane, and its one way in: `append` checks the event against the
 * catalogue, writes it inside the caller's transaction (with the others that transaction appended,
 * as it ends: read back, and given its id, once committed), and tells `onCommitted` listeners once
 * that transaction has committed (never, if it rolls back).
 */
export class EventStore {
  private readonly s;
  private readonly inserts: MultiRow<Pending>;
  private readonly listeners = new Set<(row: EventRow) => void>();
  constructor(private readonly db: DB) {
    this.inserts = new MultiRow<Pending>(
      db,
      '(?, ?, ?, ?, ?, ?, ?, ?)',
      (values) => `INSERT INTO events (at, type, level, routine_id, run_id, job_id, message, data) VALUES ${values}`,
      ({ row, data }) => [row.at, row.type, row.level, row.routineId, row.runId, row.jobId, row.message, data],
    );
    this.s = {
      after: db.prepare(`SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?`),
      lastId: db.prepare(`SELECT COALESCE(MAX(id), 0) FROM events`).pluck(),
      recent: db.prepare(`SELECT * FROM events ORDER BY id DESC LIMIT ?`),
    };
  }

  /** Hear every event this store appends, after its commit; returns the unsubscribe. */
  onCommitted(listener: (row: EventRow) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  append(e: NewEvent, at: number): EventRow {
    const problems = eventProblems(e);
    if (problems.length) throw new EventShapeError(problems);
    const row: EventRow = {
      id: 0,
      at,
      type: e.type,
      level: e.level ?? specOf(e.type)!.level,
      routineId: e.routineId ?? null,
      runId: e.runId ?? null,
      jobId: e.jobId ?? null,
      message: e.message,
      data: e.data ?? null,
    };
    writeAtCommit(this.db, this.insertAll, { row, data: row.data ? JSON.stringify(row.data) : null });
    if (this.listeners.size) afterCommit(this.db, () => this.publish(row));
    return row;
  }

  /**
   * The events a transaction appended, in multi-row inserts (a statement per row was a tenth of
   * the pass). Ids follow append order: AUTOINCREMENT gives the rows of one insert consecutive ids
   * after every id ever used, and nothing else writes meanwhile (the transaction holds the write
   * lock), so the last id and the count give each row its own.
   */
  private readonly insertAll = (items: Pending[]): void => {
    this.inserts.run(items, (chunk, result) => {
      const last = Number(result.lastInsertRowid);
      chunk.forEach((p, k) => (p.row.id = last - chunk.length + 1 + k));
    });
  };

  /** Each listener on its own: one that throws neither stops the others nor reaches the appender. */
  private publish(row: EventRow): void {
    for (const l of this.listeners) {
      try {
        l(row);
      } catch (err) {
        process.stderr.write(`tend: a listener of ${row.type} failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  }

  after(id: number, limit = 1000): EventRow[] {
    return (this.s.after.all(id, limit) as EventRecord[]).map(toEvent);
  }

  lastId(): number {
    return Number(this.s.lastId.get());
  }

  private runLog: Database.Statement | undefined;

  /**
   * The lines an external run sent (`tend report … log`), the newest `limit`, newest first: through
   * events_external_log (migration 11); an older database opened read-only reads its routine's newest
   * events through events_routine, as before.
   */
  externalLog(routineId: string, runId: string, limit: number): EventRow[] {
    this.runLog ??= hasIndex(this.db, 'events_external_log')
      ? this.db.prepare(`SELECT * FROM events WHERE run_id = @runId AND type = 'external:log' ORDER BY id DESC LIMIT @limit`)
      : this.db.prepare(`SELECT * FROM (SELECT * FROM events WHERE routine_id = @routineId ORDER BY id DESC LIMIT @limit) WHERE run_id = @runId AND type = 'external:log'`);
    return (this.runLog.all({ routineId, runId, limit }) as EventRecord[]).map(toEvent);
  }

  recent(limit = 100): EventRow[] {
    return (this.s.recent.all(limit) as EventRecord[]).map(toEvent);
  }
}
