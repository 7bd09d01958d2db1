// Work that must wait until what it describes is committed (publishing an appended event): queued
// while a write transaction is open, run once the outermost one commits, and dropped with the
// part of the transaction that queued it when that part rolls back (a savepoint or the whole).
// Every write transaction goes through writeTx (busy.ts), which marks and settles these.
import type { DB } from './db.js';

const queues = new WeakMap<DB, (() => void)[]>();

/** Run `fn` now when no transaction is open, else once the outermost one has committed. */
export function afterCommit(db: DB, fn: () => void): void {
  if (!db.inTransaction) return runAll([fn]);
  let q = queues.get(db);
  if (!q) queues.set(db, (q = []));
  q.push(fn);
}

/** `body` is one (nested or outermost) transaction of `db`: its queued work is kept or dropped with it. */
export function settleAfter<T>(db: DB, outermost: boolean, body: () => T): T {
  const mark = queues.get(db)?.length ?? 0;
  let out: T;
  try {
    out = body();
  } catch (err) {
    const q = queues.get(db);
    if (q) q.length = outermost ? 0 : Math.min(mark, q.length);
    throw err;
  }
  if (outermost && !db.inTransaction) {
    const q = queues.get(db);
    if (q?.length) {
      queues.set(db, []);
      runAll(q);
    }
  }
  return out;
}

function runAll(fns: (() => void)[]): void {
  for (const fn of fns) {
    try {
      fn();
    } catch (err) {
      // What runs here only tells others; it cannot undo the commit, so it must not look as if it failed.
      process.stderr.write(`tend: after-commit work failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
  }
}
