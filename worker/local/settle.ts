// poll and fetch for local jobs, from the job directory and /proc alone: no memory of having
// launched anything is needed, so a restarted daemon settles jobs it never started.
import { readHeartbeat } from '../jobdir/jobdir.js';
import { existsSync } from 'node:fs';
import type { Outcome, PollState } from '../../main/engine/backend.js';
import { TendError } from '../../main/engine/errors.js';
import { isSameProcessAlive, startTicksToMs, type ProcessTable } from '../jobdir/proc.js';
import { capLogs } from '../jobdir/logs.js';
import { jobPath, readCancelRecord, readManifestAsWritten, readSentinel, type Sentinel } from '../jobdir/jobdir.js';
import { completeHandle, sameBoot, type LocalHandle } from './handle.js';
import { missingOutputs } from '../jobdir/outputs.js';

export const VANISHED_REASON = 'process vanished without an exit code (killed with the machine?)';

/** The routine or its wrapper (which still has to write the sentinel) is alive. */
function anyAlive(h: LocalHandle, table?: ProcessTable): boolean {
  if (!sameBoot(h)) return false;
  return isSameProcessAlive(h.pid, h.startTime, table) || isSameProcessAlive(h.wrapperPid, h.wrapperStartTime, table);
}

/**
 * What the manifest says of the routine's start, by run dir: it is written once before the launch,
 * and every poll of a running job asks (the read and parse were a fifth of a poll).
 */
const manifestStarts = new Map<string, { startTime: number | null; startedAt: number | null }>();
const MANIFEST_STARTS_KEPT = 4096;

/** As written in the manifest for this routine process (a standby's go), else derived from its start ticks. */
function startedAtOf(h: LocalHandle, manifest?: ReturnType<typeof readManifestAsWritten>): number | null {
  let m = manifest === undefined ? manifestStarts.get(h.runDir) : undefined;
  if (!m) {
    const read = manifest === undefined ? readManifestAsWritten(h.runDir) : manifest;
    m = { startTime: read?.routine?.startTime ?? null, startedAt: typeof read?.startedAt === 'number' ? read.startedAt : null };
    if (read && manifest === undefined) {
      if (manifestStarts.size >= MANIFEST_STARTS_KEPT) manifestStarts.clear();
      manifestStarts.set(h.runDir, m);
    }
  }
  if (m.startedAt !== null && m.startTime === h.startTime) return m.startedAt;
  return startTicksToMs(h.startTime);
}

/** `table`: one look at the process table for a whole poll (ps costs a process per look). */
export function pollLocalJob(handle: LocalHandle, table?: ProcessTable): PollState {
  const runDir = handle.runDir;
  if (readSentinel(runDir)) return { state: 'done' };
  if (!existsSync(jobPath(runDir, 'manifest'))) {
    return { state: 'lost', reason: existsSync(runDir) ? `no manifest in job directory ${runDir}` : `job directory missing: ${runDir}` };
  }
  const h = completeHandle(handle);
  if (anyAlive(h, table)) {
    // The poller keeps the log cap (nothing sits between the routine and its files).
    capLogs(runDir);
    return { state: 'running', startedAt: startedAtOf(h), heartbeatAt: readHeartbeat(runDir) };
  }
  // Nothing alive. Either it ended just now (the wrapper renamed the sentinel, then exited,
  // between the two looks) or it vanished; a second look at the sentinel tells them apart.
  if (readSentinel(runDir)) return { state: 'done' };
  if (h.pid === null && h.wrapperPid === null) return { state: 'lost', reason: `no process was ever recorded for ${runDir} (never launched?)` };
  return { state: 'done' };
}

function outcomeOf(sentinel: Sentinel): Pick<Outcome, 'exitCode' | 'signal' | 'reason'> {
  if (sentinel.kind === 'exit') return { exitCode: sentinel.code, signal: null, reason: null };
  if (sentinel.kind === 'signal') return { exitCode: null, signal: sentinel.signal, reason: null };
  return { exitCode: null, signal: null, reason: sentinel.message };
}

export function fetchLocalJob(handle: LocalHandle): Outcome {
  const runDir = handle.runDir;
  const h = completeHandle(handle);
  const manifest = readManifestAsWritten(runDir);
  let sentinel = readSentinel(runDir);
  if (!sentinel && anyAlive(h)) throw new TendError('CONFLICT', `job ${h.runId || runDir} is still running`);
  sentinel ??= readSentinel(runDir);
  manifestStarts.delete(runDir);
  const startedAt = startedAtOf(h, manifest);
  if (!sentinel) return { exitCode: null, signal: null, reason: VANISHED_REASON, startedAt, endedAt: null };

  capLogs(runDir, true);
  const base = outcomeOf(sentinel);
  // The start comes from /proc start ticks and the boot time (10 ms steps each), the end from the
  // sentinel's mtime: for a job of a few milliseconds the start could read later than the end.
  const outcome: Outcome = { ...base, startedAt: startedAt === null ? null : Math.min(startedAt, sentinel.at), endedAt: sentinel.at };

  const cancel = readCancelRecord(runDir);
  if (cancel) {
    const how = base.signal ? `stopped by ${base.signal}` : base.exitCode !== null ? `exited ${base.exitCode}` : base.reason;
    outcome.reason = `cancelled (${how}${cancel.signal === 'KILL' ? ` after a ${cancel.graceMs} ms grace period` : ''})`;
    return outcome;
  }

  if (base.exitCode === 0 && manifest && manifest.outputs.length > 0) {
    const missing = missingOutputs(manifest.cwd, manifest.outputs);
    if (missing.length > 0) outcome.reason = `promised output missing: ${missing.join(', ')}`;
  }
  return outcome;
}
