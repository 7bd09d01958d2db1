import type { Handle } from '../backend.js';
import type { DB } from './db.js';
import { MultiRow } from './multi-row.js';

/** A run launched on `backend` as `handle`: its claim is done, its ledger entry to write. */
export interface LaunchedRun {
  runId: string;
  backend: string;
  handle: Handle;
}

export interface LedgerEntry {
  id: number;
  kind: 'run' | 'job';
  refId: string;
  backend: string;
  handle: Handle;
  submittedAt: number;
}

/** The in-flight ledger (every submitted handle) and leases (timestamped, atomic claims). */
export class LedgerStore {
  private readonly s;
  private readonly launched;
  private readonly settled: MultiRow<string>;
  constructor(db: DB) {
    this.settled = new MultiRow<string>(db, '?', (keys) => `DELETE FROM ledger WHERE kind = 'run' AND ref_id IN (${keys}) RETURNING ref_id AS refId`, (id) => [id]);
    this.launched = {
      release: new MultiRow<LaunchedRun>(db, '?', (keys) => `DELETE FROM leases WHERE queue = 'run' AND item_id IN (${keys})`, (r) => [r.runId]),
      record: new MultiRow<{ run: LaunchedRun; at: number }>(
        db,
        `('run', ?, ?, ?, ?)`,
        (values) => `INSERT INTO ledger (kind, ref_id, backend, handle, submitted_at) VALUES ${values}`,
        ({ run, at }) => [run.runId, run.backend, JSON.stringify(run.handle), at],
      ),
    };
    this.s = {
      insert: db.prepare(`INSERT INTO ledger (kind, ref_id, backend, handle, submitted_at) VALUES (?, ?, ?, ?, ?)`),
      setHandle: db.prepare(`UPDATE ledger SET handle = ? WHERE kind = ? AND ref_id = ?`),
      remove: db.prepare(`DELETE FROM ledger WHERE kind = ? AND ref_id = ?`),
      all: db.prepare(`SELECT * FROM ledger ORDER BY id`),
      keys: db.prepare(`SELECT kind, ref_id AS refId FROM ledger ORDER BY id`),
      get: db.prepare(`SELECT * FROM ledger WHERE kind = ? AND ref_id = ?`),
      count: db.prepare(`SELECT COUNT(*) FROM ledger`).pluck(),
      countBackend: db.prepare(`SELECT backend, COUNT(*) AS n FROM ledger GROUP BY backend`),
      claim: db.prepare(`INSERT OR IGNORE INTO leases (queue, item_id, owner, claimed_at) VALUES (?, ?, ?, ?)`),
      release: db.prepare(`DELETE FROM leases WHERE queue = ? AND item_id = ?`),
      // A lease whose item is owned by a live ledger entry is never swept: a slow job is not an abandoned one.
      stale: db.prepare(`SELECT queue, item_id AS itemId, owner, claimed_at AS claimedAt FROM leases l WHERE claimed_at < ?
        AND NOT EXISTS (SELECT 1 FROM ledger g WHERE g.kind = l.queue AND g.ref_id = l.item_id)`),
      lease: db.prepare(`SELECT queue, item_id AS itemId, owner, claimed_at AS claimedAt FROM leases WHERE queue = ? AND item_id = ?`),
    };
  }

  record(kind: 'run' | 'job', refId: string, backend: string, handle: Handle, at: number): void {
    this.s.insert.run(kind, refId, backend, JSON.stringify(handle), at);
  }

  /**
   * `release` then `record` of each run launched, in a few statements for them all (one each per
   * run was most of what recording a pass's launches cost). In the ledger in the order given.
   */
  recordRuns(runs: readonly LaunchedRun[], at: number): void {
    this.launched.release.run(runs);
    this.launched.record.run(runs.map((run) => ({ run, at })));
  }

  /** `clear` of each of these runs, in a few statements for them all: the ids it cleared (the others were not in the ledger). */
  clearRuns(runIds: readonly string[]): Set<string> {
    return new Set(this.settled.all<{ refId: string }>(runIds).map((r) => r.refId));
  }

  setHandle(kind: 'run' | 'job', refId: string, handle: Handle): void {
    this.s.setHandle.run(JSON.stringify(handle), kind, refId);
  }

  clear(kind: 'run' | 'job', refId: string): boolean {
    return this.s.remove.run(kind, refId).changes > 0;
  }

  all(): LedgerEntry[] {
    return (this.s.all.all() as { id: number; kind: 'run' | 'job'; ref_id: string; backend: string; handle: string; submitted_at: number }[]).map((r) => ({
      id: r.id,
      kind: r.kind,
      refId: r.ref_id,
      backend: r.backend,
      handle: JSON.parse(r.handle) as Handle,
      submittedAt: r.submitted_at,
    }));
  }

  /** What is in the ledger, without its handles (none parsed): to count it and look items up. */
  keys(): Pick<LedgerEntry, 'kind' | 'refId'>[] {
    return this.s.keys.all() as Pick<LedgerEntry, 'kind' | 'refId'>[];
  }

  get(kind: 'run' | 'job', refId: string): LedgerEntry | null {
    const r = this.s.get.get(kind, refId) as { id: number; kind: 'run' | 'job'; ref_id: string; backend: string; handle: string; submitted_at: number } | undefined;
    return r ? { id: r.id, kind: r.kind, refId: r.ref_id, backend: r.backend, handle: JSON.parse(r.handle) as Handle, submittedAt: r.submitted_at } : null;
  }

  count(): number {
    return Number(this.s.count.get());
  }

  countByBackend(): Map<string, number> {
    return new Map((this.s.countBackend.all() as { backend: string; n: number }[]).map((r) => [r.backend, r.n]));
  }

  /** Atomic: true for exactly one claimant. */
  claim(queue: string, itemId: string, owner: string, at: number): boolean {
    return this.s.claim.run(queue, itemId, owner, at).changes === 1;
  }

  release(queue: string, itemId: string): void {
    this.s.release.run(queue, itemId);
  }

  lease(queue: string, itemId: string): { queue: string; itemId: string; owner: string; claimedAt: number } | null {
    return (this.s.lease.get(queue, itemId) as { queue: string; itemId: string; owner: string; claimedAt: number } | undefined) ?? null;
  }

  staleLeases(olderThan: number): { queue: string; itemId: string; owner: string; claimedAt: number }[] {
    return this.s.stale.all(olderThan) as { queue: string; itemId: string; owner: string; claimedAt: number }[];
  }
}
