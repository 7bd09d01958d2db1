import type Database from 'better-sqlite3';
import type { RunRow, RunStatus } from '../domain/types.js';
import { CompareAndSet } from './cas.js';
import { RunChain } from './chain.js';
import { MultiRow } from './multi-row.js';
import { hasIndex, hasTable, type DB } from './db.js';
import { writeTx } from './busy.js';
import { RoutineCycles } from './cycles.js';
import { RoutineLatest } from './latest.js';
import { QUARTER_MS, RUN_TERMINAL, RunTotals, type FinishedRun } from './totals.js';

const FINISHED_COLUMNS = 'routine_id, kind, status, created_at, started_at, ended_at';

interface RunRecord {
  id: string;
  routine_id: string;
  kind: 'batch' | 'realtime';
  cycle: string;
  scheduled_at: number;
  attempt: number;
  status: RunStatus;
  reason: string | null;
  exit_code: number | null;
  signal: string | null;
  backend: string | null;
  run_dir: string | null;
  manual: number;
  not_before: number | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  heartbeat_at: number | null;
}

export function toRun(r: RunRecord): RunRow {
  return {
    id: r.id,
    routineId: r.routine_id,
    kind: r.kind,
    cycle: r.cycle,
    scheduledAt: r.scheduled_at,
    attempt: r.attempt,
    status: r.status,
    reason: r.reason,
    exitCode: r.exit_code,
    signal: r.signal,
    backend: r.backend,
    runDir: r.run_dir,
    manual: r.manual === 1,
    notBefore: r.not_before,
    createdAt: r.created_at,
    startedAt: r.started_at,
    // Rows written before ends were clamped to their starts.
    endedAt: r.ended_at !== null && r.started_at !== null && r.ended_at < r.started_at ? r.started_at : r.ended_at,
    heartbeatAt: r.heartbeat_at,
  };
}

export type RunState = Pick<RunRow, 'id' | 'routineId' | 'kind' | 'status' | 'attempt'>;

/**
 * What settling a finished run reads of it (scheduler/check.ts, finalize.ts): not its backend,
 * directory, exit or end, which settling writes or never reads. Every column read costs (a text one
 * is a string made; 64 whole rows about 220 µs, these columns about 155 µs).
 */
export type SettlingRun = Pick<RunRow, 'id' | 'routineId' | 'kind' | 'cycle' | 'scheduledAt' | 'attempt' | 'status' | 'reason' | 'manual' | 'createdAt' | 'startedAt'>;

export interface RunPatch {
  reason?: string | null;
  exitCode?: number | null;
  signal?: string | null;
  backend?: string | null;
  runDir?: string | null;
  startedAt?: number | null;
  endedAt?: number | null;
  heartbeatAt?: number | null;
}

// The statuses of unfinished runs, spelled as the partial index runs_routine_active spells them: SQLite
// uses a partial index only for a WHERE that matches its own. It is the one index of unfinished runs
// (migration 8), named in every read of them, so none reads history (it exists since migration 5).
const ACTIVE = `('PENDING', 'DELAYED', 'STARTING', 'RUNNING')`;

/**
 * Runs created before @from and ended since, without reading everything that ended since (a day's
 * runs): those created in the window before @from (a short range of creation times), and the few
 * that lasted longer than the window (the partial index runs_long of migration 6, whose WHERE this
 * spells as it does). The two parts are disjoint by creation time.
 */
const CARRIED_WINDOW_MS = 600_000;
/** `byCreation`: runs_created (migration 11), or runs_created_status in an older database opened read-only. */
const endedSinceCreatedBefore = (byCreation: string) => `SELECT rowid AS rid, * FROM runs INDEXED BY ${byCreation}
            WHERE created_at >= @from - ${CARRIED_WINDOW_MS} AND created_at < @from AND ended_at >= @from AND status NOT IN ${ACTIVE}
          UNION ALL SELECT rowid AS rid, * FROM runs INDEXED BY runs_long
            WHERE ended_at - created_at > ${CARRIED_WINDOW_MS} AND ended_at >= @from AND created_at < @from - ${CARRIED_WINDOW_MS} AND status NOT IN ${ACTIVE}`;

const PATCH_COLUMNS: Record<keyof RunPatch, string> = {
  reason: 'reason',
  exitCode: 'exit_code',
  signal: 'signal',
  backend: 'backend',
  runDir: 'run_dir',
  startedAt: 'started_at',
  endedAt: 'ended_at',
  heartbeatAt: 'heartbeat_at',
};

export class RunStore {
  private readonly s;
  private readonly moves: CompareAndSet<RunPatch>;
  private readonly statusesOf: MultiRow<string>;
  private readonly rowsOf: MultiRow<string>;
  private counted: RunTotals | null = null;
  private kept: RoutineLatest | null = null;
  private inCycle: RoutineCycles | null = null;
  private carried: { since: Database.Statement; dayCarried: Database.Statement } | null = null;
  private insertRun: Database.Statement | undefined;
  private chained: RunChain | null | undefined;
  private byIndex: { newest: Database.Statement; newestRealtime: Database.Statement } | undefined;
  constructor(private readonly db: DB) {
    this.moves = new CompareAndSet<RunPatch>(db, 'runs', PATCH_COLUMNS, [], { start: 'startedAt', end: 'endedAt' });
    this.statusesOf = new MultiRow<string>(db, '?', (ids) => `SELECT id, status FROM runs WHERE id IN (${ids})`, (id) => [id]);
    this.rowsOf = new MultiRow<string>(
      db,
      '?',
      (ids) => `SELECT id, routine_id AS routineId, kind, cycle, scheduled_at AS scheduledAt, attempt, status, reason, manual, created_at AS createdAt, started_at AS startedAt
        FROM runs WHERE id IN (${ids})`,
      (id) => [id],
    );
    // Ties on created_at (two runs of a routine in the same millisecond: a retry queued by the pass
    // that fired the first attempt, an immediate realtime restart) break by insertion order (rowid).
    this.s = {
      get: db.prepare(`SELECT * FROM runs WHERE id = ?`),
      status: db.prepare(`SELECT status FROM runs WHERE id = ?`).pluck(),
      state: db.prepare(`SELECT id, routine_id AS routineId, kind, status, attempt FROM runs WHERE id = ?`),
      finished: db.prepare(`SELECT ${FINISHED_COLUMNS} FROM runs WHERE id = ?`),
      active: db.prepare(`SELECT * FROM runs INDEXED BY runs_routine_active WHERE status IN ${ACTIVE} ORDER BY scheduled_at, created_at, rowid`),
      activeFor: db.prepare(`SELECT * FROM runs INDEXED BY runs_routine_active WHERE routine_id = ? AND status IN ${ACTIVE} ORDER BY created_at, rowid`),
      // Three disjoint index reads instead of an OR the planner can only answer by scanning: created
      // since, still open (runs_routine_active), and created before but ended since (runs_long).
      dayPage: db.prepare(`SELECT rowid AS rid, * FROM runs WHERE created_at >= @from AND created_at < @to
          AND (created_at > @afterAt OR (created_at = @afterAt AND rowid > @afterRid))
        ORDER BY created_at, rowid LIMIT @limit`),
      cursorOf: db.prepare(`SELECT created_at AS at, rowid AS rid FROM runs WHERE id = ?`),
      heartbeat: db.prepare(`UPDATE runs SET heartbeat_at = ? WHERE id = ? AND (heartbeat_at IS NULL OR heartbeat_at < ?)`),
      countByStatus: db.prepare(`SELECT status, COUNT(*) AS n FROM runs WHERE created_at >= ? GROUP BY status`),
      failures: db.prepare(`SELECT * FROM runs WHERE status = 'ERROR' ORDER BY COALESCE(ended_at, created_at) DESC, rowid DESC LIMIT ?`),
    };
  }

  insert(run: RunRow): void {
    const chain = this.chain!;
    const { prev, successor } = chain.place(run.routineId, run.createdAt);
    // Positional: binding by name looked up each of a spread copy's properties (the pass inserts a run per due routine).
    this.insertRun ??= this.db.prepare(`INSERT INTO runs (id, routine_id, kind, cycle, scheduled_at, attempt, status, reason, backend, run_dir, manual, not_before, created_at, prev_rowid)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const { lastInsertRowid } = this.insertRun.run(run.id, run.routineId, run.kind, run.cycle, run.scheduledAt, run.attempt, run.status, run.reason, run.backend, run.runDir, run.manual ? 1 : 0, run.notBefore, run.createdAt, prev);
    chain.inserted(run.routineId, run.id, Number(lastInsertRowid), run.createdAt, successor);
    this.newest.inserted(run.routineId, run.scheduledAt, run.createdAt, Number(lastInsertRowid));
    this.cycles.inserted({ cycle: run.cycle, routineId: run.routineId, scheduledAt: run.scheduledAt, createdAt: run.createdAt, rowid: Number(lastInsertRowid) });
    // The insert writes no start or end: counted as stored.
    if (RUN_TERMINAL.has(run.status)) this.totals.finished({ routine_id: run.routineId, kind: run.kind, status: run.status, created_at: run.createdAt, started_at: null, ended_at: null });
  }

  /**
   * `fn` inserts runs of these routines (and writes nothing else): where each goes in its routine's
   * chain is found from heads read together first, not one read per insert (store/chain.ts).
   */
  insertingFor<T>(routineIds: readonly string[], fn: () => T): T {
    const chain = this.chain;
    return chain ? chain.withHeads(routineIds, fn) : fn();
  }

  /** Prepared on first use: a read-only open of an older database has no runs_long index. */
  private get carry() {
    if (this.carried) return this.carried;
    const endedSince = endedSinceCreatedBefore(hasIndex(this.db, 'runs_created') ? 'runs_created' : 'runs_created_status');
    return (this.carried = {
      since: this.db.prepare(`SELECT * FROM (
          SELECT rowid AS rid, * FROM runs WHERE created_at >= @from
          UNION ALL SELECT rowid AS rid, * FROM runs INDEXED BY runs_routine_active WHERE status IN ${ACTIVE} AND created_at < @from
          UNION ALL ${endedSince})
        ORDER BY created_at, rid`),
      // A day's runs a page at a time: created in the day, in creation order, after a cursor. The
      // first page also carries the runs created before the day that were open or ended in it.
      dayCarried: this.db.prepare(`SELECT * FROM (
          SELECT rowid AS rid, * FROM runs INDEXED BY runs_routine_active WHERE status IN ${ACTIVE} AND created_at < @from
          UNION ALL ${endedSince})
        ORDER BY created_at, rid`),
    });
  }

  /** Prepared on first use: a read-only open of an older database has no totals tables. */
  private get totals(): RunTotals {
    return (this.counted ??= new RunTotals(this.db));
  }

  /** Each routine's newest run in each cycle, kept as runs are inserted (prepared on first use). */
  private get cycles(): RoutineCycles {
    return (this.inCycle ??= new RoutineCycles(this.db));
  }

  /** Each routine's newest run, kept as runs are inserted (prepared on first use, as the totals). */
  get newest(): RoutineLatest {
    return (this.kept ??= new RoutineLatest(this.db));
  }

  get(id: string): RunRow | null {
    const r = this.s.get.get(id) as RunRecord | undefined;
    return r ? toRun(r) : null;
  }

  /** What a run in flight is, without the rest of its row (each column read costs). */
  state(id: string): RunState | null {
    return (this.s.state.get(id) as RunState | undefined) ?? null;
  }

  status(id: string): RunStatus | null {
    return (this.s.status.get(id) as RunStatus | undefined) ?? null;
  }

  /** What settling reads of each of these runs, in a few reads for them all; a run that does not exist is left out. */
  settling(ids: readonly string[]): Map<string, SettlingRun> {
    const out = new Map<string, SettlingRun>();
    for (const r of this.rowsOf.all<Omit<SettlingRun, 'manual'> & { manual: number }>(ids)) out.set(r.id, { ...r, manual: r.manual === 1 });
    return out;
  }

  /** The status of each of these runs, in a few reads for them all; a run that does not exist is left out. */
  statuses(ids: readonly string[]): Map<string, RunStatus> {
    return new Map(this.statusesOf.all<{ id: string; status: RunStatus }>(ids).map((r) => [r.id, r.status]));
  }

  active(): RunRow[] {
    return (this.s.active.all() as RunRecord[]).map(toRun);
  }

  activeFor(routineId: string): RunRow[] {
    return (this.s.activeFor.all(routineId) as RunRecord[]).map(toRun);
  }

  latestInCycle(routineId: string, cycle: string): RunRow | null {
    const r = this.cycles.latestIn().get({ routine: routineId, cycle }) as RunRecord | undefined;
    return r ? toRun(r) : null;
  }

  /**
   * Each routine's runs by creation, newest first (store/chain.ts; prepared on first use). Null in an
   * older database opened read-only (before migration 14), which seeks runs_routine_created instead.
   */
  private get chain(): RunChain | null {
    if (this.chained === undefined) this.chained = hasTable(this.db, 'run_links') ? new RunChain(this.db) : null;
    return this.chained;
  }

  private get indexed(): { newest: Database.Statement; newestRealtime: Database.Statement } {
    return (this.byIndex ??= {
      newest: this.db.prepare(`SELECT * FROM runs WHERE routine_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`),
      newestRealtime: this.db.prepare(`SELECT * FROM runs WHERE routine_id = ? AND kind = 'realtime' ORDER BY created_at DESC, rowid DESC LIMIT ?`),
    });
  }

  /** The routine's newest run by creation. */
  latest(routineId: string): RunRow | null {
    return this.history(routineId, 1)[0] ?? null;
  }

  /** The newest run of a routine by scheduled time (the instance the Today page shows), kept in routine_latest as latestPerRoutine's. */
  latestScheduled(routineId: string): RunRow | null {
    const r = this.newest.ofRoutine().get(routineId) as RunRecord | undefined;
    return r ? toRun(r) : null;
  }

  /** The newest run (by scheduled time) of every defined routine that has one. */
  latestPerRoutine(): Map<string, RunRow> {
    return new Map((this.newest.perRoutine().all() as RunRecord[]).map((r) => [r.routine_id, toRun(r)]));
  }

  /** The routine's newest `limit` runs by creation, newest first. */
  history(routineId: string, limit: number): RunRow[] {
    const chain = this.chain;
    return ((chain ? chain.newest(routineId, limit) : this.indexed.newest.all(routineId, limit)) as unknown as RunRecord[]).map(toRun);
  }

  /** Runs created since `from`, plus any still open or ended since then (today's view). */
  since(from: number): RunRow[] {
    return (this.carry.since.all({ from }) as RunRecord[]).map(toRun);
  }

  /**
   * Runs of the day [from, to) in creation order, `limit` at a time; `after` is the id of the last run
   * of the previous page (null: the first page, which also holds runs begun before the day that were
   * open or ended in it). Unknown `after`: null.
   */
  dayPage(from: number, to: number, after: string | null, limit: number): RunRow[] | null {
    let afterAt = from - 1;
    let afterRid = 0;
    const out: RunRow[] = [];
    if (after !== null) {
      const c = this.s.cursorOf.get(after) as { at: number; rid: number } | undefined;
      if (!c) return null;
      afterAt = c.at;
      afterRid = c.rid;
    } else {
      out.push(...(this.carry.dayCarried.all({ from }) as RunRecord[]).map(toRun));
    }
    out.push(...(this.s.dayPage.all({ from, to, afterAt, afterRid, limit }) as RunRecord[]).map(toRun));
    return out;
  }

  /** The routine's newest `limit` realtime runs by creation, newest first. */
  recentRealtime(routineId: string, limit: number): RunRow[] {
    const chain = this.chain;
    return ((chain ? chain.newest(routineId, limit, (r) => r.kind === 'realtime') : this.indexed.newestRealtime.all(routineId, limit)) as unknown as RunRecord[]).map(toRun);
  }

  /**
   * Runs created since `from`, by status. From a quarter-hour that run_quarter_totals holds (every
   * local midnight since the table began), the finished ones are its totals and the unfinished ones
   * come from runs_routine_active: no read of the day's runs. Otherwise, or on a database without the
   * table (a read-only open of an older one), the runs are counted.
   */
  countByStatus(from: number): Record<string, number> {
    const q = this.quarterCounts;
    const rows = (q && from % QUARTER_MS === 0 && from / QUARTER_MS >= q.from
      ? [...q.finished.all(from / QUARTER_MS), ...q.active.all(from)]
      : this.s.countByStatus.all(from)) as { status: string; n: number }[];
    const out: Record<string, number> = {};
    // In status order, as one GROUP BY gives them.
    for (const r of rows.sort((a, b) => (a.status < b.status ? -1 : a.status > b.status ? 1 : 0))) out[r.status] = (out[r.status] ?? 0) + r.n;
    return out;
  }

  private quarters: { from: Database.Statement; finished: Database.Statement; active: Database.Statement } | null | undefined;

  /** Prepared on first use; null without the quarter totals (migration 7). `from` moves as the retention prunes them. */
  private get quarterCounts(): { from: number; finished: Database.Statement; active: Database.Statement } | null {
    if (this.quarters === undefined) {
      const from = this.db.prepare(`SELECT value FROM meta WHERE key = 'run_quarters_from'`).pluck();
      this.quarters =
        from.get() === undefined
          ? null
          : {
              from,
              finished: this.db.prepare(`SELECT status, SUM(n) AS n FROM run_quarter_totals WHERE quarter >= ? GROUP BY status`),
              active: this.db.prepare(`SELECT status, COUNT(*) AS n FROM runs INDEXED BY runs_routine_active WHERE status IN ${ACTIVE} AND created_at >= ? GROUP BY status`),
            };
    }
    return this.quarters && { ...this.quarters, from: Number(this.quarters.from.get()) };
  }

  private exits: Database.Statement | undefined;

  /**
   * Realtime instances that exited since `since`, counted per routine, the most first: through
   * runs_exited (migration 13), which holds those alone; an older database opened read-only reads
   * every run ended in the window through runs_ended, as before.
   */
  realtimeExits(since: number, limit: number): { routineId: string; exits: number; lastAt: number }[] {
    this.exits ??= this.db.prepare(`SELECT routine_id AS routineId, COUNT(*) AS exits, MAX(ended_at) AS lastAt
      FROM runs INDEXED BY ${hasIndex(this.db, 'runs_exited') ? 'runs_exited' : 'runs_ended'}
      WHERE ended_at >= ? AND kind = 'realtime' AND status = 'EXITED' GROUP BY routine_id ORDER BY exits DESC LIMIT ?`);
    return this.exits.all(since, limit) as { routineId: string; exits: number; lastAt: number }[];
  }

  failures(limit: number): RunRow[] {
    return (this.s.failures.all(limit) as RunRecord[]).map(toRun);
  }

  recordHeartbeat(id: string, at: number): void {
    this.s.heartbeat.run(at, id, at);
  }

  /**
   * Compare-and-set: move a run from one of `from` to `to`, applying the patch. Returns false when
   * the run was no longer in an expected state (someone else moved it first).
   */
  /**
   * `read`: the run as read in the caller's transaction, then moved by this call only. A run that
   * finishes with an end in the patch is counted from it and the patch (the pass settles a run
   * per finished job: a read back per run was a tenth of settling it), else from the row read back.
   */
  cas(id: string, from: readonly RunStatus[], to: RunStatus, patch: RunPatch = {}, read?: SettlingRun): boolean {
    if (!RUN_TERMINAL.has(to) || from.every((f) => RUN_TERMINAL.has(f))) return this.moves.move(id, from, to, patch);
    // A run that finishes is counted once, as it finishes, in the transaction that finishes it:
    // counted as its row reads once moved (the end clamped to the start). Inside a transaction the
    // move is one statement and the count is gathered with it, so no savepoint of its own is needed.
    const known = read && this.db.inTransaction && patch.endedAt !== undefined ? read : null;
    const finish = () => {
      if (!this.moves.move(id, from, to, patch)) return false;
      // Read back rather than RETURNING: SQLite gathers RETURNING rows in a table of their own first.
      this.totals.finished(known ? finishedAs(known, to, patch) : (this.s.finished.get(id) as FinishedRun));
      return true;
    };
    return this.db.inTransaction ? finish() : writeTx(this.db, finish);
  }
}

/**
 * The row a move that patches the end leaves, as the move's SQL writes it (CompareAndSet's span:
 * the start as patched or as it was, the end never before it; SQL's MAX of a NULL is NULL).
 */
export function finishedAs(read: Pick<RunRow, 'routineId' | 'kind' | 'createdAt' | 'startedAt'>, to: RunStatus, patch: RunPatch): FinishedRun {
  const start = patch.startedAt !== undefined ? patch.startedAt : read.startedAt;
  const end = patch.endedAt ?? null;
  return { routine_id: read.routineId, kind: read.kind, status: to, created_at: read.createdAt, started_at: start, ended_at: end === null ? null : Math.max(end, start ?? end) };
}
