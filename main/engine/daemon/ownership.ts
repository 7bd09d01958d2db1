// Exactly one process owns a data dir. `daemon.pid` is claimed atomically under
// `daemon.pid.lock` (created with O_EXCL); stale ownership (dead pid, or a live pid that is not
// the process that wrote the file: PID reuse) is removed.
import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { readProcStat } from '../../../worker/jobdir/proc.js';
import { paths } from '../datadir.js';
import { TendError } from '../errors.js';

export interface PidRecord {
  pid: number;
  /** /proc start time (clock ticks since boot); null where /proc does not exist. */
  startTime: number | null;
  startedAt: string;
  kind: 'daemon' | 'app';
}

export interface Ownership {
  record: PidRecord;
  /** The record of an owner that died without releasing the data dir (an unclean shutdown), else null. */
  previous: PidRecord | null;
  release(): void;
}

const LOCK_STALE_MS = 10_000;

export function readPidRecord(dataDir: string): PidRecord | null {
  try {
    const raw = readFileSync(paths(dataDir).pid, 'utf8').trim();
    if (/^\d+$/.test(raw)) return { pid: Number(raw), startTime: null, startedAt: '', kind: 'daemon' };
    const rec = JSON.parse(raw) as PidRecord;
    return Number.isSafeInteger(rec.pid) && rec.pid > 0 ? rec : null;
  } catch {
    return null;
  }
}

/** The record names a process that is alive and is the one that wrote it. */
export function isLiveOwner(rec: PidRecord | null): boolean {
  if (!rec) return false;
  try {
    process.kill(rec.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (rec.startTime === null) return looksLikeTend(rec.pid);
  const stat = readProcStat(rec.pid);
  if (!stat) return process.platform !== 'linux';
  return stat.startTime === rec.startTime;
}

/**
 * A record without a start time (a bare pid, from an older or foreign writer) cannot prove the
 * process is the one that wrote it; where /proc exists, its command line must at least be Tend's.
 */
function looksLikeTend(pid: number): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return process.platform !== 'linux';
  }
  return /tend/i.test(cmdline);
}

function acquireLock(lock: string): number {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      return fd;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // Held: by a live claimant (wait a moment) or left by a dead one (remove it).
      let content: string;
      let ino: number;
      let age = 0;
      try {
        content = readFileSync(lock, 'utf8');
        const st = statSync(lock);
        ino = st.ino;
        age = Date.now() - st.mtimeMs;
      } catch {
        continue;
      }
      const holder = Number(content);
      let alive = false;
      if (Number.isSafeInteger(holder) && holder > 0) {
        try {
          process.kill(holder, 0);
          alive = true;
        } catch (e) {
          alive = (e as NodeJS.ErrnoException).code === 'EPERM';
        }
      }
      if (!alive || age > LOCK_STALE_MS) {
        breakStaleLock(lock, ino, content);
        continue;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  throw new TendError('UNAVAILABLE', `could not take ${lock}: another process keeps claiming it`);
}

/**
 * Remove a stale lock, but only the one we judged stale: two claimants that both saw it stale
 * must not let the slower one remove the lock the faster one has just taken. The check and the
 * removal happen under a second O_EXCL file.
 */
function breakStaleLock(lock: string, ino: number, content: string): void {
  const guard = `${lock}.break`;
  let fd: number;
  try {
    fd = openSync(guard, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Someone else is breaking it; a guard left by a claimant that died meanwhile goes after a while.
    try {
      if (Date.now() - statSync(guard).mtimeMs > LOCK_STALE_MS) rmSync(guard, { force: true });
    } catch {
      /* gone already */
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    return;
  }
  try {
    const st = statSync(lock, { throwIfNoEntry: false });
    if (st && st.ino === ino && readFileSync(lock, 'utf8') === content) rmSync(lock, { force: true });
  } catch {
    /* removed meanwhile */
  } finally {
    closeSync(fd);
    rmSync(guard, { force: true });
  }
}

export function claimOwnership(dataDir: string, kind: PidRecord['kind'] = 'daemon'): Ownership {
  const p = paths(dataDir);
  const fd = acquireLock(p.pidLock);
  let record: PidRecord;
  let previous: PidRecord | null = null;
  try {
    const current = readPidRecord(dataDir);
    if (current && current.pid !== process.pid) previous = current;
    if (current && current.pid !== process.pid && isLiveOwner(current)) {
      throw new TendError('CONFLICT', `data dir ${dataDir} is owned by ${current.kind} pid ${current.pid} (since ${current.startedAt || 'unknown'})`);
    }
    record = { pid: process.pid, startTime: readProcStat(process.pid)?.startTime ?? null, startedAt: new Date().toISOString(), kind };
    const tmp = `${p.pid}.${process.pid}.tmp`;
    const f = openSync(tmp, 'w', 0o600);
    writeSync(f, `${JSON.stringify(record)}\n`);
    closeSync(f);
    renameSync(tmp, p.pid);
  } finally {
    closeSync(fd);
    rmSync(p.pidLock, { force: true });
  }
  return {
    record,
    previous,
    release() {
      const now = readPidRecord(dataDir);
      if (now?.pid === process.pid) rmSync(p.pid, { force: true });
    },
  };
}
