// Reading /proc: process identity (pid + start time since boot, which defeats pid reuse), the
// members of a job's session, and the boot a recorded identity belongs to. Linux only.
import { readFileSync, readdirSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  /** Field 3: R, S, D, Z (zombie), T, X … */
  state: string;
  /** Field 5. */
  pgid: number;
  /** Field 6. */
  sid: number;
  /** Field 22: clock ticks after boot at which the process started (constant for its life). */
  startTime: number;
}

/** USER_HZ, the unit of /proc start times; 100 on every Linux ABI Node runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

export function readProcStat(pid: number): ProcStat | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // `pid (comm) state ppid pgrp session …` — comm may hold spaces and parentheses.
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  const startTime = Number(fields[19]);
  const pgid = Number(fields[2]);
  const sid = Number(fields[3]);
  if (!Number.isFinite(startTime) || !Number.isFinite(pgid) || !Number.isFinite(sid)) return null;
  return { pid, state: fields[0] ?? '?', pgid, sid, startTime };
}

function isDead(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X' || stat.state === 'x';
}

/** The process with this pid exists, is not a zombie, and started at exactly `startTime`. */
export function isSameProcessAlive(pid: number | null, startTime: number | null): boolean {
  if (pid === null || startTime === null) return false;
  const stat = readProcStat(pid);
  return stat !== null && stat.startTime === startTime && !isDead(stat);
}

/**
 * Live (non-zombie) members of the session `sid` that a job's leader (pid = sid, started at
 * `leaderStartTime`) created. Scanning by session rather than process group also finds
 * grandchildren that moved to a group of their own (a job-control shell inside the job).
 * If the leader's pid now belongs to a different process, the number was free to reuse, which
 * the kernel only allows once no member of our session remains: the session is gone.
 */
export function sessionMembers(sid: number, leaderStartTime: number | null): ProcStat[] {
  // Without the leader's start time nothing proves the number is still ours: signal nobody.
  if (leaderStartTime === null) return [];
  const leader = readProcStat(sid);
  if (leader && leader.startTime !== leaderStartTime) return [];
  const members: ProcStat[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const name of entries) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const stat = readProcStat(Number(name));
    if (stat && stat.sid === sid && !isDead(stat)) members.push(stat);
  }
  return members;
}

let cachedBootId: string | null | undefined;

/** This boot's random id: start times only compare within one boot. */
export function currentBootId(): string | null {
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
 * Wall-clock boot time, only for turning start ticks into dates: now minus /proc/uptime (10 ms
 * resolution; `btime` in /proc/stat is whole seconds). Start times and uptime both count from boot.
 */
export function bootTimeMs(): number | null {
  try {
    const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    return Number.isFinite(uptime) ? Date.now() - Math.round(uptime * 1000) : null;
  } catch {
    return null;
  }
}

/** Approximate wall-clock start of a process from its start ticks (10 ms resolution). */
export function startTicksToMs(startTime: number | null): number | null {
  const boot = startTime === null ? null : bootTimeMs();
  if (startTime === null || boot === null) return null;
  return boot + Math.round((startTime * 1000) / CLOCK_TICKS_PER_SECOND);
}
