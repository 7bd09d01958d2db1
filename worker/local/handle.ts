// The durable handle of a local job: JSON-safe, enough for a process that never launched the job
// to poll, fetch and cancel it. The run dir is the truth; the pids are a fast path and a check.
import type { Handle } from '../../main/engine/backend.js';
import { currentBootId } from '../jobdir/proc.js';
import { readManifest, readPidRecord } from '../jobdir/jobdir.js';

export interface LocalHandle {
  backend: 'local';
  runId: string;
  runDir: string;
  /** The routine: leader of its own session, so also its process group and session id. */
  pid: number | null;
  /** /proc/<pid>/stat field 22 (clock ticks after boot), compared exactly. */
  startTime: number | null;
  /** The wrapper (run.sh), which writes the sentinel when the routine ends. */
  wrapperPid: number | null;
  wrapperStartTime: number | null;
  /** /proc/sys/kernel/random/boot_id at launch: after a reboot no recorded process is alive. */
  bootId: string | null;
}

export function toHandle(h: LocalHandle): Handle {
  return { ...h };
}

function int(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
}

/** Read a handle back from the ledger; null if it is not a local handle at all. */
export function parseHandle(h: Handle): LocalHandle | null {
  const runDir = h['runDir'];
  if (typeof runDir !== 'string' || runDir === '') return null;
  const runId = h['runId'];
  const bootId = h['bootId'];
  return {
    backend: 'local',
    runId: typeof runId === 'string' ? runId : '',
    runDir,
    pid: int(h['pid']),
    startTime: int(h['startTime']),
    wrapperPid: int(h['wrapperPid']),
    wrapperStartTime: int(h['wrapperStartTime']),
    bootId: typeof bootId === 'string' ? bootId : null,
  };
}

/**
 * Fill in what the handle lacks from the directory (pid.json is written by the wrapper and is the
 * most complete record; the manifest copy may lag behind it).
 */
export function completeHandle(h: LocalHandle): LocalHandle {
  if (h.pid !== null && h.startTime !== null && h.wrapperPid !== null && h.wrapperStartTime !== null) return h;
  const rec = readPidRecord(h.runDir);
  if (!rec) return h;
  return {
    ...h,
    pid: h.pid ?? rec.pid,
    startTime: h.startTime ?? rec.startTime,
    wrapperPid: h.wrapperPid ?? rec.wrapperPid,
    wrapperStartTime: h.wrapperStartTime ?? rec.wrapperStartTime,
  };
}

/**
 * Rebuild a handle from a job directory alone, e.g. for a run whose submit was interrupted before
 * its handle reached the ledger. Null if the directory holds no local job.
 */
export function handleFromRunDir(runDir: string): LocalHandle | null {
  const m = readManifest(runDir);
  if (!m) return null;
  return completeHandle({
    backend: 'local',
    runId: m.runId,
    runDir,
    pid: m.routine.pid,
    startTime: m.routine.startTime,
    wrapperPid: m.wrapper.pid,
    wrapperStartTime: m.wrapper.startTime,
    bootId: m.bootId,
  });
}

/** Processes recorded in another boot are gone, whatever /proc says about their pids now. */
export function sameBoot(h: LocalHandle): boolean {
  const now = currentBootId();
  return h.bootId === null || now === null || h.bootId === now;
}
