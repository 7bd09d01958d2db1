// Process identity: a pid plus the process's start time (constant for its life) defeats pid
// reuse. Two providers read it: Linux's /proc (field 22 of /proc/<pid>/stat, clock ticks after
// boot) and, everywhere else, `ps` (its `lstart`, whole seconds since the epoch), read once per
// table. The provider is chosen by platform; TEND_PROCESS_TABLE=proc|ps overrides it, so the same
// tests run against both on Linux. Start times of the two are different units: a job is judged
// by the provider that launched it (the wrapper records start times the same way, see wrapper.ts).
import { readFileSync } from 'node:fs';
import { TendError } from '../../main/engine/errors.js';
import { procfsTable, procfsBootId, procfsStartToMs } from './proc-linux.js';
import { lstartSeconds, psBootId, psTable } from './proc-ps.js';

export interface ProcStat {
  pid: number;
  /** R, S, D, Z (zombie), T, X … (ps: the first letter of its STAT). */
  state: string;
  pgid: number;
  /** Session id; the ps provider, which cannot read it on every OS, gives null. */
  sid: number | null;
  ppid: number;
  /** /proc: clock ticks after boot. ps: seconds since the epoch. */
  startTime: number;
}

/** A view of the process table; ps tables are one snapshot, /proc tables read on demand. */
export interface ProcessTable {
  stat(pid: number): ProcStat | null;
  /** Every live process (a full scan: for session membership only). */
  all(): ProcStat[];
}

export type ProviderName = 'proc' | 'ps';

export interface ProcessProvider {
  name: ProviderName;
  table(): ProcessTable;
  /** Start time (in this provider's unit) as text the wrapper wrote → number. */
  parseStart(text: string): number | null;
  startToMs(startTime: number): number | null;
  bootId(): string | null;
}

const providers: Record<ProviderName, ProcessProvider> = {
  proc: { name: 'proc', table: procfsTable, parseStart: intStart, startToMs: procfsStartToMs, bootId: procfsBootId },
  ps: { name: 'ps', table: psTable, parseStart: lstartSeconds, startToMs: (s) => s * 1000, bootId: psBootId },
};

export function intStart(text: string): number | null {
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isSafeInteger(n) ? n : null;
}

/** The provider in use: TEND_PROCESS_TABLE, else /proc on Linux and ps elsewhere. */
export function processProvider(): ProcessProvider {
  const forced = process.env['TEND_PROCESS_TABLE'];
  if (forced === undefined || forced === '') return process.platform === 'linux' ? providers.proc : providers.ps;
  if (forced === 'proc' || forced === 'ps') return providers[forced];
  throw new TendError('INVALID', `TEND_PROCESS_TABLE must be "proc" or "ps", not ${JSON.stringify(forced)}`);
}

export function isDead(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X' || stat.state === 'x';
}

export function readProcStat(pid: number, table = processProvider().table()): ProcStat | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return table.stat(pid);
}

/** The process with this pid exists, is not a zombie, and started at exactly `startTime`. */
export function isSameProcessAlive(pid: number | null, startTime: number | null, table?: ProcessTable): boolean {
  if (pid === null || startTime === null) return false;
  const stat = readProcStat(pid, table);
  return stat !== null && stat.startTime === startTime && !isDead(stat);
}

/**
 * Live (non-zombie) members of the session a job's leader (pid = sid, started at
 * `leaderStartTime`) created: by session id where the table has it, else the leader's process
 * group and every descendant of the leader (which also finds a grandchild that moved to a group of
 * its own). If the leader's pid now belongs to a different process, the number was free to reuse,
 * which the kernel only allows once no member of our session remains: the session is gone.
 */
export function sessionMembers(sid: number, leaderStartTime: number | null, table = processProvider().table()): ProcStat[] {
  // Without the leader's start time nothing proves the number is still ours: signal nobody.
  if (leaderStartTime === null) return [];
  const leader = readProcStat(sid, table);
  if (leader && leader.startTime !== leaderStartTime) return [];
  const all = table.all();
  if (all.every((p) => p.sid !== null)) return all.filter((p) => p.sid === sid && !isDead(p));
  const inJob = new Set<number>([sid]);
  const byPpid = new Map<number, ProcStat[]>();
  for (const p of all) byPpid.set(p.ppid, [...(byPpid.get(p.ppid) ?? []), p]);
  const members: ProcStat[] = [];
  const queue = all.filter((p) => p.pgid === sid || p.pid === sid);
  for (const p of queue) inJob.add(p.pid);
  while (queue.length > 0) {
    const p = queue.shift() as ProcStat;
    if (!isDead(p)) members.push(p);
    for (const c of byPpid.get(p.pid) ?? []) {
      if (inJob.has(c.pid)) continue;
      inJob.add(c.pid);
      queue.push(c);
    }
  }
  return members;
}

/** This boot's id where the OS gives one (start times only compare within one boot). */
export function currentBootId(): string | null {
  return processProvider().bootId();
}

/** Approximate wall-clock start of a process from its start time (10 ms steps on /proc, 1 s on ps). */
export function startTicksToMs(startTime: number | null): number | null {
  return startTime === null ? null : processProvider().startToMs(startTime);
}

/** A start time as the wrapper wrote it (a number, or ps's text) → this provider's number. */
export function parseStartTime(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v === 'string') return processProvider().parseStart(v);
  return null;
}

/** For tests and the health check: does `/proc` answer here at all. */
export function hasProcfs(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}
