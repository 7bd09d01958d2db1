// `tend daemon status` from the pidfile and daemon.state.json alone: who owns the data dir, its
// heartbeat, and (from a live, beating owner) the counts it saved there, so `status --json` of a
// running daemon loads no SQLite and opens no database. Without a live owner the counts come from
// the database (status.ts).
import { isLiveOwner, readPidRecord, type PidRecord } from './ownership.js';
import { heartbeatFresh, readState, type DaemonState } from './state.js';
import type { StatusCounts } from './status-counts.js';

export interface DaemonStatus extends StatusCounts {
  dataDir: string;
  healthy: boolean;
  owner: { pid: number; kind: string; alive: boolean; startedAt: string } | null;
  heartbeat: { last: string | null; ageMs: number | null; fresh: boolean };
  version: string | null;
  api: { url: string } | null;
  lastPass: DaemonState['lastPass'];
  /** Backends the live daemon holds paused, with why: nothing fails, their work waits. */
  pausedBackends: Record<string, string>;
  /** History retention of the owning daemon (null before a daemon wrote it). */
  history: NonNullable<DaemonState['history']> | null;
}

export interface OwnerView {
  rec: PidRecord | null;
  alive: boolean;
  state: DaemonState | null;
  /** Alive, the state file is its own, and its heartbeat is fresh. */
  fresh: boolean;
}

export function readOwner(dataDir: string, now: number): OwnerView {
  const rec = readPidRecord(dataDir);
  const alive = isLiveOwner(rec);
  const state = readState(dataDir);
  return { rec, alive, state, fresh: alive && state?.pid === rec?.pid && heartbeatFresh(state, now) };
}

/** The counts a live, beating owner saved, while they still describe today; else null. */
export function ownerCounts(o: OwnerView, now: number): StatusCounts | null {
  const saved = o.fresh ? o.state?.counts : undefined;
  if (!saved || !(now < saved.validUntil)) return null;
  const { at: _at, validUntil: _until, ...counts } = saved;
  return counts;
}

const NO_COUNTS: StatusCounts = { runs: {}, jobs: {}, inFlight: 0, nextDue: null, recentFailures: [], webhooks: null };

export function statusFrom(dataDir: string, o: OwnerView, now: number, counts: StatusCounts | null): DaemonStatus {
  const { rec, alive, state, fresh } = o;
  const last = state?.lastHeartbeat ?? null;
  return {
    dataDir,
    healthy: alive && fresh,
    owner: rec ? { pid: rec.pid, kind: rec.kind, alive, startedAt: rec.startedAt } : null,
    heartbeat: { last, ageMs: last ? now - Date.parse(last) : null, fresh },
    version: state?.version ?? null,
    api: alive ? (state?.api ?? null) : null,
    ...(counts ?? NO_COUNTS),
    lastPass: state?.lastPass ?? null,
    pausedBackends: fresh ? (state?.pausedBackends ?? {}) : {},
    history: state?.history ?? null,
  };
}
