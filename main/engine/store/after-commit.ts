// Work tied to the outcome of a write transaction, kept per connection and dropped with the part of
// the transaction that queued it when that part rolls back (a savepoint or the whole):
// - writes gathered while it is open and made together as its outermost level ends, still inside it
//   (a pass's events become a few multi-row inserts instead of one statement each);
// - work that must wait until what it describes is committed (publishing an appended event).
// Every write transaction goes through writeTx (busy.ts), which marks, writes and settles these.
import type { DB } from './db.js';

interface Gathered {
  write: (items: unknown[]) => void;
  item: unknown;
}

const gathered = new WeakMap<DB, Gathered[]>();
const queues = new WeakMap<DB, (() => void)[]>();

/**
 * Write `item` with `write` as the outermost transaction ends, together with every other item
 * gathered for the same `write` (in the order they came); at once when no transaction is open. What
 * is gathered is not in the tables until then: reads of the same transaction do not see it. Items
 * are grouped by the identity of `write`: pass one function made once (a closure made per call
 * would write each item on its own).
 */
export function writeAtCommit<T>(db: DB, write: (items: T[]) => void, item: T): void {
  if (!db.inTransaction) return write([item]);
  let g = gathered.get(db);
  if (!g) gathered.set(db, (g = []));
  g.push({ write: write as (items: unknown[]) => void, item });
}

/** Make the gathered writes: called by writeTx as the outermost body returns, before COMMIT. */
export function writeGathered(db: DB): void {
  for (let g = gathered.get(db); g?.length; g = gathered.get(db)) {
    gathered.set(db, []);
    writeEach(g);
  }
}

function writeEach(g: Gathered[]): void {
  const byWrite = new Map<(items: unknown[]) => void, unknown[]>();
  for (const { write, item } of g) {
    const items = byWrite.get(write);
    if (items) items.push(item);
    else byWrite.set(write, [item]);
  }
  for (const [write, items] of byWrite) write(items);
}

/** Run `fn` now when no transaction is open, else once the outermost one has committed. */
export function afterCommit(db: DB, fn: () => void): void {
  if (!db.inTransaction) return runAll([fn]);
  let q = queues.get(db);
  if (!q) queues.set(db, (q = []));
  q.push(fn);
}

/** `body` is one (nested or outermost) transaction of `db`: its gathered writes and queued work are kept or dropped with it. */
export function settleAfter<T>(db: DB, outermost: boolean, body: () => T): T {
  const mark = queues.get(db)?.length ?? 0;
  const gatheredMark = gathered.get(db)?.length ?? 0;
  let out: T;
  try {
    out = body();
  } catch (err) {
    const q = queues.get(db);
    if (q) q.length = outermost ? 0 : Math.min(mark, q.length);
    const g = gathered.get(db);
    if (g) g.length = outermost ? 0 : Math.min(gatheredMark, g.length);
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
