// The job directory: file names, the manifest, the wrapper's pid record and the exit-code
// sentinel. Every file a reader may look at while it changes is written to a temp name and
// renamed into place, so a reader sees the old version or the new one, never half of one.
//
//   <runDir>/run.sh           the wrapper (wrapper.ts)
//   <runDir>/manifest.json    what was launched and how to judge it (Manifest below), written once
//   <runDir>/pid.json         written by the wrapper once the routine is started (PidRecord)
//   <runDir>/stdout.log(.1)   captured streams, capped (logs.ts)
//   <runDir>/stderr.log(.1)
//   <runDir>/exit_code        `<int>` | `signal:NAME` | `error:MESSAGE` + newline — the job is over
//   <runDir>/heartbeat        touched by the routine (`tend heartbeat`); its mtime is the beat
//   <runDir>/cancel.json      written by cancel before it signals
//   <runDir>/wrapper.log      the wrapper's own stdout/stderr (normally empty)
//   <runDir>/launched         `PID STARTTIME` of the wrapper that claimed the directory (O_EXCL)
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { JobSpec, Manifest, ProcessIdentity } from '../../main/engine/backend.js';
import { parseStartTime, startTicksToMs } from './proc.js';

export const FILES = {
  wrapper: 'run.sh',
  manifest: 'manifest.json',
  pids: 'pid.json',
  sentinel: 'exit_code',
  heartbeat: 'heartbeat',
  cancel: 'cancel.json',
  wrapperLog: 'wrapper.log',
  launched: 'launched',
} as const;

export function jobPath(runDir: string, file: keyof typeof FILES): string {
  return join(runDir, FILES[file]);
}

/** Write `data` to `path` through a temp file in the same directory and an atomic rename. */
export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

// Declared with the port (the engine serves manifests it reads through a backend).
export type { Manifest, ProcessIdentity };

/** What every backend's manifest says of a job before it started: from the spec, secrets masked. */
export function baseManifest(spec: JobSpec, facts: { tendVersion: string; cwd: string; logCapBytes: number; createdAt: number; bootId: string | null }): Omit<Manifest, 'backend'> {
  return {
    manifestVersion: 1,
    tendVersion: facts.tendVersion,
    runId: spec.runId,
    kind: spec.kind,
    routineId: spec.routineId,
    jobId: spec.jobId,
    attempt: spec.attempt,
    command: spec.command,
    args: [...spec.maskedArgs],
    cwd: facts.cwd,
    envNames: Object.keys(spec.env).sort(),
    outputs: [...spec.outputs],
    revision: spec.revision,
    logCapBytes: facts.logCapBytes,
    scheduledAt: spec.scheduledAt,
    createdAt: facts.createdAt,
    bootId: facts.bootId,
    wrapper: { pid: null, startTime: null },
    routine: { pid: null, startTime: null },
    startedAt: null,
  };
}

export function writeManifest(runDir: string, manifest: Manifest): void {
  writeFileAtomic(jobPath(runDir, 'manifest'), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The manifest as it was written: by a local submit, once, before the launch (no pids yet). */
export function readManifestAsWritten(runDir: string): Manifest | null {
  try {
    const value: unknown = JSON.parse(readFileSync(jobPath(runDir, 'manifest'), 'utf8'));
    if (typeof value !== 'object' || value === null || (value as { backend?: unknown }).backend !== 'local') return null;
    return value as Manifest;
  } catch {
    return null;
  }
}

/**
 * The manifest with what the waiter recorded since it was written: the wrapper's and the routine's
 * pid and start time (pid.json; the wrapper alone from `launched` until then) and the routine's
 * start. Submit writes the manifest once, before the launch: writing it again with the pids cost
 * the daemon a file creation per job (a sixth of its launch work, profiled draining 300 jobs).
 */
export function readManifest(runDir: string): Manifest | null {
  const m = readManifestAsWritten(runDir);
  if (!m || (m.wrapper.pid !== null && m.routine.pid !== null)) return m;
  const rec = readPidRecord(runDir);
  if (rec) {
    return {
      ...m,
      wrapper: { pid: rec.wrapperPid, startTime: rec.wrapperStartTime },
      routine: { pid: rec.pid, startTime: rec.startTime },
      startedAt: m.startedAt ?? startTicksToMs(rec.startTime),
    };
  }
  const launched = m.wrapper.pid === null ? readLaunched(runDir) : null;
  return launched ? { ...m, wrapper: launched } : m;
}

/** What the wrapper records once it has started the routine. */
export interface PidRecord {
  wrapperPid: number;
  wrapperStartTime: number | null;
  pid: number;
  startTime: number | null;
}

function intOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
}

export function readPidRecord(runDir: string): PidRecord | null {
  try {
    const v = JSON.parse(readFileSync(jobPath(runDir, 'pids'), 'utf8')) as Record<string, unknown>;
    const wrapperPid = intOrNull(v['wrapperPid']);
    const pid = intOrNull(v['pid']);
    if (wrapperPid === null || pid === null) return null;
    return { wrapperPid, wrapperStartTime: parseStartTime(v['wrapperStartTime']), pid, startTime: parseStartTime(v['startTime']) };
  } catch {
    return null;
  }
}

export type Sentinel =
  | { kind: 'exit'; code: number; at: number }
  | { kind: 'signal'; signal: string; at: number }
  | { kind: 'error'; message: string; at: number };

/** The exit-code sentinel, or null while the job has not ended (as far as its wrapper knows). */
export function readSentinel(runDir: string): Sentinel | null {
  const path = jobPath(runDir, 'sentinel');
  // Looked at on every poll of every running job: a stat that does not throw when the file is
  // absent (an error's making cost ~30 µs, most of a poll), then the read.
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return null;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const at = st.mtimeMs;
  // The waiter writes its one line straight into a new file: until the newline is there, it is
  // not written yet (or the waiter died mid-write, and the job reads as vanished).
  if (!text.endsWith('\n')) return null;
  text = text.trim();
  return parseSentinel(text, Math.round(at));
}

export function parseSentinel(text: string, at: number): Sentinel {
  if (/^-?\d+$/.test(text)) return { kind: 'exit', code: Number(text), at };
  if (text.startsWith('signal:') && text.length > 7) return { kind: 'signal', signal: text.slice(7), at };
  if (text.startsWith('error:')) return { kind: 'error', message: text.slice(6) || 'wrapper error', at };
  return { kind: 'error', message: `unreadable exit_code sentinel: ${JSON.stringify(text.slice(0, 80))}`, at };
}

export function formatSentinel(s: { kind: 'exit'; code: number } | { kind: 'signal'; signal: string } | { kind: 'error'; message: string }): string {
  if (s.kind === 'exit') return `${s.code}\n`;
  if (s.kind === 'signal') return `signal:${s.signal}\n`;
  return `error:${s.message.replace(/\s+/g, ' ')}\n`;
}

/** Write the sentinel from the Node side (the wrapper normally does), never over an existing one. */
export function writeSentinelIfAbsent(runDir: string, s: Parameters<typeof formatSentinel>[0]): void {
  if (readSentinel(runDir)) return;
  writeFileAtomic(jobPath(runDir, 'sentinel'), formatSentinel(s));
}

/** The heartbeat file's mtime (epoch ms), or null if the routine never beat. */
export function readHeartbeat(runDir: string): number | null {
  const st = statSync(jobPath(runDir, 'heartbeat'), { throwIfNoEntry: false });
  return st ? Math.round(st.mtimeMs) : null;
}

export interface CancelRecord {
  requestedAt: number;
  graceMs: number;
  /** The last signal cancel had to send (KILL when TERM did not stop the job in time). */
  signal: 'TERM' | 'KILL' | null;
}

export function readCancelRecord(runDir: string): CancelRecord | null {
  const path = jobPath(runDir, 'cancel');
  if (!existsSync(path)) return null; // the usual case, and no error made for it
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as CancelRecord;
  } catch {
    return null;
  }
}

export function writeCancelRecord(runDir: string, rec: CancelRecord): void {
  writeFileAtomic(jobPath(runDir, 'cancel'), `${JSON.stringify(rec)}\n`);
}

/** The wrapper that claimed the directory (it created `launched` exclusively), or null. */
export function readLaunched(runDir: string): { pid: number; startTime: number | null } | null {
  let text: string;
  try {
    text = readFileSync(jobPath(runDir, 'launched'), 'utf8');
  } catch {
    return null;
  }
  // `PID START`: START is a number (/proc) or ps's quoted lstart text, or null.
  const line = text.trim();
  const space = line.indexOf(' ');
  const p = Number(space < 0 ? line : line.slice(0, space));
  if (!Number.isSafeInteger(p) || p <= 0) return null;
  const start = space < 0 ? '' : line.slice(space + 1);
  return { pid: p, startTime: start.startsWith('"') ? parseStartTime(start.replace(/"/g, '')) : parseStartTime(start === '' ? null : Number(start)) };
}

/**
 * Did a wrapper ever start on this directory? A directory a launcher left half-written (killed
 * before it spawned the wrapper) holds none of these, and may be launched.
 */
export function wasLaunched(runDir: string): boolean {
  if (!existsSync(runDir)) return false; // a new run's: nothing to read
  if (existsSync(jobPath(runDir, 'launched')) || existsSync(jobPath(runDir, 'pids')) || existsSync(jobPath(runDir, 'sentinel'))) return true;
  const m = readManifest(runDir);
  return m !== null && m.wrapper.pid !== null;
}
