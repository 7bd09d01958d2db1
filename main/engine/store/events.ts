import type { DB } from './db.js';

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

export type NewEvent = Omit<EventRow, 'id' | 'at' | 'routineId' | 'runId' | 'jobId' | 'data' | 'level'> & {
  level?: Level;
  routineId?: string | null;
  runId?: string | null;
  jobId?: number | null;
  data?: Record<string, unknown> | null;
};

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

/** The append-only logging plane. */
export class EventStore {
  private readonly s;
  constructor(db: DB) {
    this.s = {
      insert: db.prepare(`INSERT INTO events (at, type, level, routine_id, run_id, job_id, message, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
      after: db.prepare(`SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?`),
      lastId: db.prepare(`SELECT COALESCE(MAX(id), 0) FROM events`).pluck(),
      forRoutine: db.prepare(`SELECT * FROM events WHERE routine_id = ? ORDER BY id DESC LIMIT ?`),
      recent: db.prepare(`SELECT * FROM events ORDER BY id DESC LIMIT ?`),
      prune: db.prepare(`DELETE FROM events WHERE at < ?`),
    };
  }

  append(e: NewEvent, at: number): EventRow {
    const row: EventRow = {
      id: 0,
      at,
      type: e.type,
      level: e.level ?? 'info',
      routineId: e.routineId ?? null,
      runId: e.runId ?? null,
      jobId: e.jobId ?? null,
      message: e.message,
      data: e.data ?? null,
    };
    const info = this.s.insert.run(at, row.type, row.level, row.routineId, row.runId, row.jobId, row.message, row.data ? JSON.stringify(row.data) : null);
    row.id = Number(info.lastInsertRowid);
    return row;
  }

  after(id: number, limit = 1000): EventRow[] {
    return (this.s.after.all(id, limit) as EventRecord[]).map(toEvent);
  }

  lastId(): number {
    return Number(this.s.lastId.get());
  }

  forRoutine(routineId: string, limit = 100): EventRow[] {
    return (this.s.forRoutine.all(routineId, limit) as EventRecord[]).map(toEvent);
  }

  recent(limit = 100): EventRow[] {
    return (this.s.recent.all(limit) as EventRecord[]).map(toEvent);
  }

  prune(before: number): number {
    return this.s.prune.run(before).changes;
  }
}
