// Each routine's runs in creation order (created_at, then rowid), newest first, as a chain through
// the runs themselves (migration 14): a run holds the rowid of its routine's run created before it
// (prev_rowid) and routine_latest holds the newest (created_rowid, the chain's head). A routine's
// last N runs are N lookups by rowid from its head. This replaces runs_routine_created, an index
// keyed by routine: every insert wrote it on a leaf of its own per routine, deep in a B-tree that
// deepens with history (a pass of 100 runs wrote 214 WAL pages with a month of history, 82 without;
// 85 and 80 through the chain).
// run_links holds the links that are not in a row: those of the runs created before migration 14
// (their prev_rowid is NULL), and those of runs the retention removed while a run before them was
// kept (an unfinished one): the chain steps over a removed run through its link.
import type Database from 'better-sqlite3';
import { writeAtCommit } from './after-commit.js';
import type { DB } from './db.js';
import { MultiRow } from './multi-row.js';

/** A run read through the chain: its row, with its rowid as `rid`. */
export interface ChainedRun {
  rid: number;
  routine_id: string;
  kind: string;
  created_at: number;
  prev_rowid: number | null;
  [column: string]: unknown;
}

interface Head {
  rowid: number;
  id: string;
  createdAt: number;
}

/** Removed runs stepped over in a row before a walk gives up (a link that loops, never written by the store). */
const MAX_HOPS = 10_000;

/** Created before: (created_at, rowid) below the bound's. */
const before = (r: { created_at: number; rid: number }, at: number, rid: number) => r.created_at < at || (r.created_at === at && r.rid < rid);

export class RunChain {
  private readonly s: {
    row: Database.Statement;
    head: Database.Statement;
    link: Database.Statement;
    setPrev: Database.Statement;
    setLink: Database.Statement;
    dropLink: Database.Statement;
    idAt: Database.Statement;
  };
  /**
   * The heads written by the open transaction, per routine, newest last: routine_latest takes them
   * as the transaction ends (store/latest.ts). An entry whose run is no longer there (its savepoint
   * rolled back) is passed over.
   */
  private readonly pending = new Map<string, Head[]>();
  /** routine_latest's heads of some routines (null: none), read together by `withHeads` for the inserts of its body. */
  private known: Map<string, { rowid: number; createdAt: number } | null> | null = null;
  private readonly headsOf: MultiRow<string>;

  constructor(private readonly db: DB) {
    this.headsOf = new MultiRow<string>(
      db,
      '?',
      (ids) => `SELECT routine_id AS routineId, created_rowid AS rowid, created_at AS createdAt FROM routine_latest WHERE routine_id IN (${ids})`,
      (id) => [id],
    );
    this.s = {
      row: db.prepare(`SELECT rowid AS rid, * FROM runs WHERE rowid = ?`),
      head: db.prepare(`SELECT created_rowid AS rowid, created_at AS createdAt FROM routine_latest WHERE routine_id = ?`),
      link: db.prepare(`SELECT prev_rowid FROM run_links WHERE run_rowid = ?`).pluck(),
      setPrev: db.prepare(`UPDATE runs SET prev_rowid = ? WHERE rowid = ?`),
      setLink: db.prepare(`INSERT INTO run_links (run_rowid, prev_rowid) VALUES (?, ?) ON CONFLICT (run_rowid) DO UPDATE SET prev_rowid = excluded.prev_rowid`),
      dropLink: db.prepare(`DELETE FROM run_links WHERE run_rowid = ?`),
      idAt: db.prepare(`SELECT id FROM runs WHERE rowid = ?`).pluck(),
    };
  }

  /**
   * Where a run of `routineId` created at `createdAt` goes: after `prev` (null: the routine's first),
   * and before `successor`, a run already there, when the clock stepped back since the routine's
   * newest (null, as nearly always: it becomes the head).
   */
  place(routineId: string, createdAt: number): { prev: number | null; successor: number | null } {
    const head = this.headOf(routineId);
    if (!head) return { prev: null, successor: null };
    if (createdAt >= head.createdAt) return { prev: head.rowid, successor: null };
    // The new run has the highest rowid: it goes after the newest run created no later than it.
    let successor: number | null = null;
    let prev: number | null = null;
    this.walk(routineId, (r) => {
      if (r.created_at <= createdAt) {
        prev = r.rid;
        return 'stop';
      }
      successor = r.rid;
      return 'skip';
    });
    return { prev, successor };
  }

  /** The run `place` placed is in at `rowid`: its successor links to it, or it is the routine's head until the transaction ends. */
  inserted(routineId: string, id: string, rowid: number, createdAt: number, successor: number | null): void {
    if (successor !== null) {
      this.s.setPrev.run(rowid, successor);
      return;
    }
    if (!this.db.inTransaction) return;
    const heads = this.pending.get(routineId);
    if (heads) heads.push({ rowid, id, createdAt });
    else this.pending.set(routineId, [{ rowid, id, createdAt }]);
    writeAtCommit(this.db, this.settled, routineId);
  }

  /** routine_latest holds the transaction's heads once its gathered writes are made. */
  private readonly settled = (routines: string[]): void => {
    for (const r of routines) this.pending.delete(r);
  };

  /**
   * `fn` (inside a transaction) with the heads routine_latest holds for these routines read in one
   * statement, not one per insert (a pass inserts a run per due routine: that read was a sixth of
   * its statements). routine_latest is written only as the outermost transaction ends
   * (writeAtCommit), never while `fn` runs inside it, so what was read stays what it holds.
   */
  withHeads<T>(routineIds: readonly string[], fn: () => T): T {
    if (!this.db.inTransaction) return fn();
    const outer = this.known;
    const known = new Map<string, { rowid: number; createdAt: number } | null>(outer);
    const ids = [...new Set(routineIds)];
    for (const id of ids) known.set(id, null);
    for (const r of this.headsOf.all<{ routineId: string; rowid: number; createdAt: number }>(ids)) known.set(r.routineId, { rowid: r.rowid, createdAt: r.createdAt });
    this.known = known;
    try {
      return fn();
    } finally {
      this.known = outer;
    }
  }

  /** The routine's newest run by creation: the open transaction's, else routine_latest's. */
  private headOf(routineId: string): Head | { rowid: number; createdAt: number } | null {
    const heads = this.pending.get(routineId);
    while (heads?.length) {
      const h = heads[heads.length - 1]!;
      if (this.db.inTransaction && this.s.idAt.get(h.rowid) === h.id) return h;
      heads.pop();
    }
    if (heads) this.pending.delete(routineId);
    const known = this.known?.get(routineId);
    if (known !== undefined) return known;
    return (this.s.head.get(routineId) as { rowid: number; createdAt: number } | undefined) ?? null;
  }

  /** The routine's newest `limit` runs by creation that `keep` keeps (all by default), newest first. */
  newest(routineId: string, limit: number, keep?: (r: ChainedRun) => boolean): ChainedRun[] {
    const out: ChainedRun[] = [];
    if (limit <= 0) return out;
    this.walk(routineId, (r) => {
      if (keep && !keep(r)) return 'skip';
      out.push(r);
      return out.length >= limit ? 'stop' : 'skip';
    });
    return out;
  }

  /**
   * Visits the routine's runs newest first until `visit` says stop. A link that names a removed run
   * (or a rowid another run has taken since) is followed through run_links; a run that is not of the
   * routine or not created before the last one visited ends nothing by itself but is never visited.
   */
  private walk(routineId: string, visit: (r: ChainedRun) => 'stop' | 'skip'): void {
    let ptr: number | null = this.headOf(routineId)?.rowid ?? null;
    let at = Infinity;
    let rid = Infinity;
    let hops = 0;
    while (ptr !== null) {
      const r = this.s.row.get(ptr) as ChainedRun | undefined;
      if (r && r.routine_id === routineId && before(r, at, rid)) {
        if (visit(r) === 'stop') return;
        at = r.created_at;
        rid = r.rid;
        hops = 0;
        ptr = r.prev_rowid ?? this.linkOf(r.rid);
      } else {
        if (++hops > MAX_HOPS) return;
        ptr = this.linkOf(ptr);
      }
    }
  }

  private linkOf(rowid: number): number | null {
    return (this.s.link.get(rowid) as number | undefined) ?? null;
  }

  /**
   * The retention removes run `id` at `rid` (oldest first; never a routine's head): a kept run before
   * it stays reachable through the link left in its place; the links of removed runs it alone led
   * to go. Its link is read again here: it was read outside the transaction. Caller holds the
   * transaction and deletes the row.
   */
  removing(run: { rid: number; id: string }): void {
    const x = this.s.row.get(run.rid) as ChainedRun | undefined;
    if (x?.['id'] !== run.id) return;
    let ptr = x.prev_rowid ?? this.linkOf(x.rid);
    let hops = 0;
    while (ptr !== null) {
      const r = this.s.row.get(ptr) as ChainedRun | undefined;
      if (r && r.routine_id === x.routine_id && before(r, x.created_at, x.rid)) break;
      const next = this.linkOf(ptr);
      if (!r && next !== null) this.s.dropLink.run(ptr);
      ptr = next;
      if (++hops > MAX_HOPS) ptr = null;
    }
    if (ptr !== null) this.s.setLink.run(x.rid, ptr);
    else if (x.prev_rowid === null) this.s.dropLink.run(x.rid);
  }
}
