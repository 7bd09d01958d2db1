// A writer that meets a locked database. Every write transaction begins IMMEDIATE, so it either
// gets the write lock (waiting up to busy_timeout for it) or fails before it has done anything;
// such a transaction is tried again until BUSY_LIMIT_MS, then refused with a message naming the
// processes that had the database open — the only ones that can have held the lock.
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TendError } from '../errors.js';
import { settleAfter, writeGathered } from './after-commit.js';
import type { DB } from './db.js';

/** SQLite's own wait for the lock, per attempt (PRAGMA busy_timeout). */
export const BUSY_TIMEOUT_MS = 5000;
/** The whole wait of one write, all attempts together. */
export const BUSY_LIMIT_MS = 15_000;

export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** Short synchronous pause between attempts (for busy answers SQLite gives without waiting). */
export function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export function busyError(dbPath: string, waitedMs: number): TendError {
  const who = lockHolders(dbPath);
  const held = who.length ? `held by ${who.join(', ')}` : 'held by another process';
  return new TendError(
    'UNAVAILABLE',
    `database ${dbPath} stayed locked for ${Math.round(waitedMs / 1000)} s (${held}); nothing was changed — try again, or see what that process is doing`,
  );
}

/** Other processes with the database (or its WAL) open, described without their arguments. */
export function lockHolders(dbPath: string): string[] {
  if (process.platform !== 'linux' || dbPath === ':memory:') return [];
  let targets: Set<string>;
  try {
    const real = realpathSync(dbPath);
    targets = new Set([real, `${real}-wal`, `${real}-shm`]);
  } catch {
    return [];
  }
  const owner = daemonPid(dirname(dbPath));
  const out: string[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  } catch {
    return [];
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    const open = fds.some((fd) => {
      try {
        return targets.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (open) out.push(describe(Number(pid), owner));
  }
  return out;
}

function daemonPid(dataDir: string): number | null {
  try {
    const rec = JSON.parse(readFileSync(join(dataDir, 'daemon.pid'), 'utf8')) as { pid?: unknown; kind?: unknown };
    return typeof rec.pid === 'number' ? rec.pid : null;
  } catch {
    return null;
  }
}

/** "the daemon (pid 12)", "pid 34 (tend job post)", "pid 56 (sqlite3)": never the arguments, which may hold secrets. */
function describe(pid: number, owner: number | null): string {
  if (pid === owner) return `the daemon (pid ${pid})`;
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const script = argv.findIndex((a) => basename(a) === 'tend.js' || basename(a) === 'tend');
    if (script >= 0) {
      const rest = argv.slice(script + 1);
      const n = rest.findIndex((a) => !/^[a-z]+$/.test(a));
      const words = rest.slice(0, Math.min(2, n < 0 ? rest.length : n));
      return `pid ${pid} (tend ${words.join(' ')})`.replace(/ \)$/, ')');
    }
    return `pid ${pid} (${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()})`;
  } catch {
    return `pid ${pid}`;
  }
}

// One transaction function per connection, taking the body as its argument: better-sqlite3 builds
// a wrapper (and its four variants) on every db.transaction() call, which the pass paid per run.
type Runner = ReturnType<DB['transaction']>;
const runners = new WeakMap<DB, Runner>();
function runnerOf(db: DB): Runner {
  let r = runners.get(db);
  if (!r) runners.set(db, (r = db.transaction((body: () => unknown) => body())));
  return r;
}

/**
 * `fn` in a BEGIN IMMEDIATE transaction. A busy database is met only at BEGIN, before `fn` ran
 * (the lock is ours from then on), so that attempt is safely tried again, until BUSY_LIMIT_MS.
 */
export function writeTx<T>(db: DB, fn: () => T): T {
  const run = runnerOf(db);
  // The outermost level makes the writes its body gathered before it commits.
  const outer = (): T => {
    const out = fn();
    writeGathered(db);
    return out;
  };
  if (db.inTransaction || db.readonly) {
    const outermost = !db.inTransaction;
    return settleAfter(db, outermost, () => run(outermost ? outer : fn) as T);
  }
  const started = Date.now();
  for (;;) {
    let entered = false;
    try {
      return settleAfter(db, true, () =>
        run.immediate(() => {
          entered = true;
          return outer();
        }) as T,
      );
    } catch (err) {
      if (entered || !isBusy(err)) throw err;
      const waited = Date.now() - started;
      if (waited >= BUSY_LIMIT_MS) throw busyError(db.name, waited);
      pause(50);
    }
  }
}
