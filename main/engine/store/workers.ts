// The worker pool's tables: commands addressed to computers (expire after 60 s, removed from the
// queue when fetched), what workers report about the runs and jobs they hold, and the workers.
import { writeTx } from './busy.js';
import type { DB } from './db.js';

export interface Command {
  id: number;
  computer: string;
  kind: 'start' | 'cancel';
  payload: Record<string, unknown>;
  createdAt: number;
  expiresAt: number;
  fetchedAt: number | null;
  fate: 'queued' | 'fetched' | 'expired';
}

export interface RemoteReport {
  kind: 'run' | 'job';
  refId: string;
  computer: string;
  state: 'running' | 'done' | 'refused';
  pid: number | null;
  exitCode: number | null;
  signal: string | null;
  reason: string | null;
  runDir: string | null;
  startedAt: number | null;
  endedAt: number | null;
  heartbeatAt: number | null;
}

export interface WorkerRow {
  computer: string;
  version: string | null;
  slots: number;
  running: number;
  lastSeen: number | null;
  registeredAt: number;
}

interface CommandRecord {
  id: number;
  computer: string;
  kind: 'start' | 'cancel';
  payload: string;
  created_at: number;
  expires_at: number;
  fetched_at: number | null;
  fate: Command['fate'];
}

const toCommand = (r: CommandRecord): Command => ({
  id: r.id,
  computer: r.computer,
  kind: r.kind,
  payload: JSON.parse(r.payload) as Record<string, unknown>,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  fetchedAt: r.fetched_at,
  fate: r.fate,
});

export class PoolStore {
  private readonly s;
  constructor(private readonly db: DB) {
    this.s = {
      enqueue: db.prepare(`INSERT INTO commands (computer, kind, payload, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`),
      expire: db.prepare(`UPDATE commands SET fate = 'expired' WHERE fate = 'queued' AND expires_at <= ?`),
      expireFor: db.prepare(`UPDATE commands SET fate = 'expired' WHERE fate = 'queued' AND computer = ?`),
      removeWorker: db.prepare(`DELETE FROM workers WHERE computer = ?`),
      queued: db.prepare(`SELECT * FROM commands WHERE computer = ? AND fate = 'queued' ORDER BY id LIMIT ?`),
      markFetched: db.prepare(`UPDATE commands SET fate = 'fetched', fetched_at = ? WHERE id = ? AND fate = 'queued'`),
      command: db.prepare(`SELECT * FROM commands WHERE id = ?`),
      recentCommands: db.prepare(`SELECT * FROM commands ORDER BY id DESC LIMIT ?`),
      pendingCancel: db.prepare(`SELECT 1 FROM commands INDEXED BY commands_cancels WHERE computer = ? AND kind = 'cancel' AND fate != 'expired' AND created_at > ?
        AND json_extract(payload, '$.runId') = ? LIMIT 1`).pluck(),
      queuedComputers: db.prepare(`SELECT DISTINCT computer FROM commands WHERE fate = 'queued'`).pluck(),
      report: db.prepare(`SELECT * FROM remote_runs WHERE kind = ? AND ref_id = ?`),
      upsertReport: db.prepare(`INSERT INTO remote_runs (kind, ref_id, computer, state, pid, exit_code, signal, reason, run_dir, started_at, ended_at, heartbeat_at, updated_at)
        VALUES (@kind, @refId, @computer, @state, @pid, @exitCode, @signal, @reason, @runDir, @startedAt, @endedAt, @heartbeatAt, @now)
        ON CONFLICT (kind, ref_id) DO UPDATE SET
          state = CASE WHEN remote_runs.state = 'running' THEN excluded.state ELSE remote_runs.state END,
          pid = COALESCE(excluded.pid, remote_runs.pid),
          exit_code = CASE WHEN remote_runs.state = 'running' THEN excluded.exit_code ELSE remote_runs.exit_code END,
          signal = CASE WHEN remote_runs.state = 'running' THEN excluded.signal ELSE remote_runs.signal END,
          reason = CASE WHEN remote_runs.state = 'running' THEN excluded.reason ELSE remote_runs.reason END,
          run_dir = COALESCE(excluded.run_dir, remote_runs.run_dir),
          started_at = COALESCE(remote_runs.started_at, excluded.started_at),
          ended_at = COALESCE(remote_runs.ended_at, excluded.ended_at),
          heartbeat_at = MAX(COALESCE(remote_runs.heartbeat_at, 0), COALESCE(excluded.heartbeat_at, 0)),
          updated_at = excluded.updated_at`),
      clearReport: db.prepare(`DELETE FROM remote_runs WHERE kind = ? AND ref_id = ?`),
      seen: db.prepare(`INSERT INTO workers (computer, version, slots, running, last_seen, registered_at) VALUES (@computer, @version, COALESCE(@slots, 0), COALESCE(@running, 0), @now, @now)
        ON CONFLICT (computer) DO UPDATE SET version = COALESCE(@version, workers.version), slots = COALESCE(@slots, workers.slots),
          running = COALESCE(@running, workers.running), last_seen = @now`),
      worker: db.prepare(`SELECT computer, version, slots, running, last_seen AS lastSeen, registered_at AS registeredAt FROM workers WHERE computer = ?`),
      workers: db.prepare(`SELECT computer, version, slots, running, last_seen AS lastSeen, registered_at AS registeredAt FROM workers ORDER BY computer`),
    };
  }

  /** The command expires `ttlMs` after `now` unless fetched (Settings.commandTtlMs). */
  enqueue(computer: string, kind: Command['kind'], payload: Record<string, unknown>, now: number, ttlMs: number): number {
    return Number(this.s.enqueue.run(computer, kind, JSON.stringify(payload), now, now + ttlMs).lastInsertRowid);
  }

  /** Expire what is too old, then take (remove from the queue) what is left for this computer. */
  fetch(computer: string, now: number, limit = 100): Command[] {
    return writeTx(this.db, () => {
      this.s.expire.run(now);
      const rows = (this.s.queued.all(computer, limit) as CommandRecord[]).map(toCommand);
      for (const c of rows) this.s.markFetched.run(now, c.id);
      return rows.map((c) => ({ ...c, fate: 'fetched' as const, fetchedAt: now }));
    });
  }

  expire(now: number): number {
    return this.s.expire.run(now).changes;
  }

  /** Every command still queued for this computer expires now (it will never fetch them). */
  expireFor(computer: string): number {
    return this.s.expireFor.run(computer).changes;
  }

  /** The worker row goes, and with it its token. */
  removeWorker(computer: string): boolean {
    return this.s.removeWorker.run(computer).changes > 0;
  }

  command(id: number): Command | null {
    const r = this.s.command.get(id) as CommandRecord | undefined;
    return r ? toCommand(r) : null;
  }

  /** A cancel for this run sent since `since` that has not expired: no need to send another. */
  cancelSent(computer: string, runId: string, since: number): boolean {
    return this.s.pendingCancel.get(computer, since, runId) !== undefined;
  }

  /** Computers with commands waiting to be fetched. */
  queuedComputers(): string[] {
    return this.s.queuedComputers.all() as string[];
  }

  recentCommands(limit = 100): Command[] {
    return (this.s.recentCommands.all(limit) as CommandRecord[]).map(toCommand);
  }

  report(kind: 'run' | 'job', refId: string): RemoteReport | null {
    const r = this.s.report.get(kind, refId) as Record<string, unknown> | undefined;
    if (!r) return null;
    return {
      kind: r.kind as 'run' | 'job',
      refId: r.ref_id as string,
      computer: r.computer as string,
      state: r.state as RemoteReport['state'],
      pid: r.pid as number | null,
      exitCode: r.exit_code as number | null,
      signal: r.signal as string | null,
      reason: r.reason as string | null,
      runDir: r.run_dir as string | null,
      startedAt: r.started_at as number | null,
      endedAt: r.ended_at as number | null,
      heartbeatAt: (r.heartbeat_at as number | null) || null,
    };
  }

  /** Reports only move forward: once done or refused, later reports change nothing. */
  saveReport(r: RemoteReport, now: number): void {
    this.s.upsertReport.run({ ...r, now });
  }

  clearReport(kind: 'run' | 'job', refId: string): void {
    this.s.clearReport.run(kind, refId);
  }

  seen(computer: string, now: number, info: { version?: string | null; slots?: number; running?: number }): void {
    this.s.seen.run({ computer, version: info.version ?? null, slots: info.slots ?? null, running: info.running ?? null, now });
  }

  worker(computer: string): WorkerRow | null {
    return (this.s.worker.get(computer) as WorkerRow | undefined) ?? null;
  }

  workers(): WorkerRow[] {
    return this.s.workers.all() as WorkerRow[];
  }
}
