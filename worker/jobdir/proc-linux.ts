// The /proc provider (Linux): a process's identity is field 22 of /proc/<pid>/stat, clock ticks
// after boot, compared exactly and only within the boot recorded as boot_id. Reads on demand:
// a poll of a few handles costs a few small reads, not a scan.
import { closeSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import type { ProcStat, ProcessTable } from './proc.js';

/** USER_HZ, the unit of /proc start times; 100 on every Linux ABI Node runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** One buffer for every read of a stat line (a few hundred bytes; a longer one is read whole). */
const statBuf = Buffer.allocUnsafe(1024);

/** /proc/<pid>/stat in one open, read and close (readFileSync's fstat and buffer growing took half again as long), or null. */
function readStatLine(pid: number): string | null {
  const path = `/proc/${pid}/stat`;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const n = readSync(fd, statBuf, 0, statBuf.length, null);
    return n < statBuf.length ? statBuf.toString('latin1', 0, n) : readFileSync(path, 'latin1');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function readStat(pid: number): ProcStat | null {
  const text = readStatLine(pid);
  if (text === null) return null;
  // `pid (comm) state ppid pgrp session …` — comm may hold spaces and parentheses.
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  const startTime = Number(fields[19]);
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const sid = Number(fields[3]);
  if (!Number.isFinite(startTime) || !Number.isFinite(pgid) || !Number.isFinite(sid)) return null;
  return { pid, state: fields[0] ?? '?', ppid, pgid, sid, startTime };
}

export function procfsTable(): ProcessTable {
  return {
    stat: readStat,
    all(): ProcStat[] {
      let entries: string[];
      try {
        entries = readdirSync('/proc');
      } catch {
        return [];
      }
      const out: ProcStat[] = [];
      for (const name of entries) {
        const c = name.charCodeAt(0);
        if (c < 48 || c > 57) continue;
        const stat = readStat(Number(name));
        if (stat) out.push(stat);
      }
      return out;
    },
  };
}

let cachedBootId: string | null | undefined;

export function procfsBootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

/**
 * Wall-clock start from start ticks: now minus /proc/uptime (10 ms resolution; `btime` in
 * /proc/stat is whole seconds) plus the ticks. Start times and uptime both count from boot.
 */
export function procfsStartToMs(startTime: number): number | null {
  const now = Date.now();
  // Every poll of a running job asks: /proc/uptime is read again after BOOT_LOOK_MS, or when the clock went back.
  if (bootMs === null || now - bootLookedAt > BOOT_LOOK_MS || now < bootLookedAt) {
    try {
      const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
      if (!Number.isFinite(uptime)) return null;
      const boot = Date.now() - Math.round(uptime * 1000);
      // Kept while later looks agree within BOOT_SLACK_MS: a process's start reads the same each time
      // it is asked (the manifest no longer records it), and a clock that was set is followed.
      if (bootMs === null || Math.abs(boot - bootMs) > BOOT_SLACK_MS) bootMs = boot;
      bootLookedAt = now;
    } catch {
      return null;
    }
  }
  return bootMs + Math.round((startTime * 1000) / CLOCK_TICKS_PER_SECOND);
}

/** When /proc/uptime was last read for bootMs. */
let bootLookedAt = 0;
const BOOT_LOOK_MS = 1000;

/** Boot's wall-clock time as last derived; the derivation wobbles by the 10 ms of /proc/uptime and the time between the two reads. */
let bootMs: number | null = null;
const BOOT_SLACK_MS = 50;
