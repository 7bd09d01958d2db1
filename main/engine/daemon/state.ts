// daemon.state.json: written atomically each pass, read by `status`, `doctor` and attaching apps.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { paths } from '../datadir.js';
import type { SavedStatusCounts } from './status-counts.js';

export interface DaemonState {
  pid: number;
  startedAt: string;
  lastHeartbeat: string;
  version: string;
  api: { url: string } | null;
  intervalMs: number;
  lastPass: { durationMs: number; fired: number; submitted: number; settled: number; faults: number } | null;
  clockJumps: number;
  /** The history retention: days kept (null: forever) and what its last sweep removed. */
  /** Backends the health gate holds paused (name → why), as of the last pass. */
  pausedBackends?: Record<string, string>;
  history?: { keepDays: number | null; lastSweep: { at: string; runs: number; jobs: number; events: number; dirs: number } | null };
  /** What `tend daemon status` counts in the database, as of `counts.at` (recounted when it changed). */
  counts?: SavedStatusCounts;
}

export function writeState(dataDir: string, state: DaemonState): void {
  const p = paths(dataDir).state;
  const tmp = `${p}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, p);
}

export function readState(dataDir: string): DaemonState | null {
  try {
    return JSON.parse(readFileSync(paths(dataDir).state, 'utf8')) as DaemonState;
  } catch {
    return null;
  }
}

/** Fresh when the last heartbeat is younger than three intervals (at least 10 s). */
export function heartbeatFresh(state: DaemonState | null, now: number): boolean {
  if (!state) return false;
  const age = now - Date.parse(state.lastHeartbeat);
  return age >= -5000 && age <= Math.max(10_000, 3 * state.intervalMs);
}
