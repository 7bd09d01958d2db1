import type { SlurmOptions } from '../domain/slurm.js';
import type { JobRow, JobStatus } from '../domain/types.js';
import { CompareAndSet } from './cas.js';
import { hasTable, type DB } from './db.js';

interface JobRecord {
  id: number;
  name: string;
  command: string;
  args: string;
  cwd: string | null;
  env: string;
  computer: string | null;
  backend: string | null;
  slurm: string | null;
  status: JobStatus;
  reason: string | null;
  exit_code: number | null;
  signal: string | null;
  run_dir: string | null;
  fetched_by: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  deps: string | null;
}

const SELECT = `SELECT j.*, (SELECT group_concat(depends_on) FROM job_deps d WHERE d.job_id = j.id) AS deps FROM jobs j`;

function toJob(r: JobRecord): JobRow {
  return {
    id: r.id,
    name: r.name,
    command: r.command,
    args: JSON.parse(r.args) as string[],
    cwd: r.cwd,
    env: JSON.parse(r.env) as Record<string, string>,
    computer: r.computer,
    status: r.status,
    reason: r.reason,
    exitCode: r.exit_code,
    signal: r.signal,
    runDir: r.run_dir,
    backend: r.backend,
    slurm: r.slurm === null ? null : (JSON.parse(r.slurm) as SlurmOptions),
    dependencies: r.deps ? r.deps.split(',').map(Number).sort((a, b) => a - b) : [],
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  };
}

export interface JobPatch {
  reason?: string | null;
  exitCode?: number | null;
  signal?: string | null;
  runDir?: string | null;
  backend?: string | null;
  fetchedBy?: string | null;
  startedAt?: number | null;
  endedAt?: number | null;
}

const COLUMNS: Record<keyof JobPatch, string> = {
  reason: 'reason',
  exitCode: 'exit_code',
  signal: 'signal',
  runDir: 'run_dir',
  backend: 'backend',
  fetchedBy: 'fetched_by',
  startedAt: 'started_at',
  endedAt: 'ended_at',
};

export interface NewJob {
  name: string;
  command: string;
  args: string[];
  cwd: string | null;
  env: Record<string, string>;
  computer: string | null;
  dependencies: number[];
  /** Chosen at post (`slurm`); null: decided when claimed (local, or a remote worker). */
  backend?: string | null;
  slurm?: SlurmOptions | null;
}

/**
 * An older database opened read-only has no job_totals: its jobs are counted, one index range per
 * status (the IN list is every status: the planner then seeks, not scans).
 */
const COUNT_KEPT_JOBS = `SELECT status, COUNT(*) AS n FROM jobs WHERE status IN ('WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL') GROUP BY status`;

export class JobStore {
  private readonly s;
  private readonly moves: CompareAndSet<JobPatch>;
  constructor(private readonly db: DB) {
    this.moves = new CompareAndSet<JobPatch>(db, 'jobs', COLUMNS, ['updated_at = @now'], { start: 'startedAt', end: 'endedAt' });
    this.s = {
      insert: db.prepare(`INSERT INTO jobs (name, command, args, cwd, env, computer, backend, slurm, status, created_at, updated_at)
        VALUES (@name, @command, @args, @cwd, @env, @computer, @backend, @slurm, @status, @now, @now)`),
      addDep: db.prepare(`INSERT INTO job_deps (job_id, depends_on) VALUES (?, ?)`),
      get: db.prepare(`${SELECT} WHERE j.id = ?`),
      exists: db.prepare(`SELECT status FROM jobs WHERE id = ?`).pluck(),
      list: db.prepare(`${SELECT} ORDER BY j.id DESC LIMIT ?`),
      byStatus: db.prepare(`${SELECT} WHERE j.status = ? ORDER BY j.id LIMIT ?`),
      idsByStatus: db.prepare(`SELECT id FROM jobs WHERE status = ? ORDER BY id LIMIT ?`).pluck(),
      runnable: db.prepare(`${SELECT} WHERE j.status = 'PENDING' AND (j.computer IS NULL OR j.computer = ?) ORDER BY j.id LIMIT ?`),
      // A job released from a stale claim keeps its last pool backend (the worker may still report it).
      claimable: db.prepare(`${SELECT} WHERE j.status = 'PENDING' AND (j.backend IS NULL OR j.backend LIKE 'pool:%') AND (j.computer IS NULL OR j.computer = ?) ORDER BY j.id LIMIT ?`),
      depStatuses: db.prepare(`SELECT d.depends_on AS id, j.status FROM job_deps d JOIN jobs j ON j.id = d.depends_on WHERE d.job_id = ?`),
      depsOf: db.prepare(`SELECT depends_on FROM job_deps WHERE job_id = ?`).pluck(),
      dependents: db.prepare(`SELECT job_id FROM job_deps WHERE depends_on = ?`).pluck(),
      // Kept by triggers (job_totals, migration 10): seven rows, however many jobs are kept.
      counts: hasTable(db, 'job_totals') ? db.prepare(`SELECT status, n FROM job_totals WHERE n > 0`) : db.prepare(COUNT_KEPT_JOBS),
    };
  }

  /** Caller validates dependencies (existence, cycles) and holds the transaction. */
  insert(job: NewJob, status: JobStatus, now: number): number {
    const info = this.s.insert.run({
      name: job.name,
      command: job.command,
      cwd: job.cwd,
      computer: job.computer,
      args: JSON.stringify(job.args),
      env: JSON.stringify(job.env),
      backend: job.backend ?? null,
      slurm: job.slurm ? JSON.stringify(job.slurm) : null,
      status,
      now,
    });
    const id = Number(info.lastInsertRowid);
    for (const dep of job.dependencies) this.s.addDep.run(id, dep);
    return id;
  }

  get(id: number): JobRow | null {
    const r = this.s.get.get(id) as JobRecord | undefined;
    return r ? toJob(r) : null;
  }

  status(id: number): JobStatus | null {
    return (this.s.exists.get(id) as JobStatus | undefined) ?? null;
  }

  list(limit = 1000): JobRow[] {
    return (this.s.list.all(limit) as JobRecord[]).map(toJob);
  }

  withStatus(status: JobStatus, limit = 10_000): JobRow[] {
    return (this.s.byStatus.all(status, limit) as JobRecord[]).map(toJob);
  }

  idsWithStatus(status: JobStatus, limit = 10_000): number[] {
    return this.s.idsByStatus.all(status, limit) as number[];
  }

  /** The oldest PENDING jobs this host may run: unaddressed or addressed to `computer`. */
  runnable(computer: string, limit: number): JobRow[] {
    return (this.s.runnable.all(computer, limit) as JobRecord[]).map(toJob);
  }

  /** PENDING jobs a worker of `computer` may take: unaddressed or addressed to it, backend not chosen at post (nor local). */
  claimable(computer: string, limit: number): JobRow[] {
    return (this.s.claimable.all(computer, limit) as JobRecord[]).map(toJob);
  }

  dependencyStatuses(id: number): { id: number; status: JobStatus }[] {
    return this.s.depStatuses.all(id) as { id: number; status: JobStatus }[];
  }

  dependenciesOf(id: number): number[] {
    return this.s.depsOf.all(id) as number[];
  }

  dependents(id: number): number[] {
    return this.s.dependents.all(id) as number[];
  }

  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.s.counts.all() as { status: string; n: number }[]) out[r.status] = r.n;
    return out;
  }

  cas(id: number, from: readonly JobStatus[], to: JobStatus, patch: JobPatch = {}, now = Date.now()): boolean {
    return this.moves.move(id, from, to, patch, { now });
  }
}
