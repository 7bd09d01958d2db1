// The worker pool on loopback, with real processes: one `tend daemon run` and `tend worker`
// processes, each with a data dir of its own, talking HTTP. State is read from the daemon's SQLite
// file (read-only); every wait has a deadline; every process is killed by its pid afterwards.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { alive, procStartTime, REPO, tend, tendAsync, tendOk } from '../helpers/cli.js';
import { Daemon, type ApiFile } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { runDirsUnder, Worker } from '../helpers/worker.js';

export { alive, assertBuilt, childEnv, killTracked, procStartTime, REPO, scratch, TEND, tend, tendAsync, tendOk, track, type CliResult } from '../helpers/cli.js';
export { readState } from '../helpers/daemon.js';
export { waitFor } from '../helpers/wait.js';
export { runDirsUnder, Worker, type Exit } from '../helpers/worker.js';
export const POOL_FIXTURES = join(REPO, 'test', 'pool', 'fixtures');

/** A TCP port nobody listens on right now (a restarted daemon must come back on the same address). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface HttpResult<T = unknown> {
  status: number;
  body: { ok: boolean; value?: T; error?: { code: string; message: string } };
}

export async function http<T = unknown>(url: string, token: string, method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
  const res = await fetch(new URL(path, url), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as HttpResult<T>['body'] };
}

export interface JobRecord {
  id: number;
  status: string;
  computer: string | null;
  fetched_by: string | null;
  backend: string | null;
  run_dir: string | null;
  reason: string | null;
  exit_code: number | null;
}

export interface RunRecord {
  id: string;
  routine_id: string;
  status: string;
  reason: string | null;
  exit_code: number | null;
  backend: string | null;
  run_dir: string | null;
  started_at: number | null;
}

export interface CommandRecord {
  id: number;
  computer: string;
  kind: string;
  payload: string;
  created_at: number;
  expires_at: number;
  fetched_at: number | null;
  fate: string;
}

export interface WorkerRecord {
  computer: string;
  last_seen: number | null;
  slots: number;
  running: number;
}

/** The daemon's database, read-only (WAL: reading never blocks the daemon). */
export class Db {
  private db: Database.Database | null = null;
  constructor(readonly file: string) {}

  private open(): Database.Database {
    this.db ??= new Database(this.file, { readonly: true, fileMustExist: true });
    return this.db;
  }

  all<T>(sql: string, ...params: unknown[]): T[] {
    return this.open().prepare(sql).all(...params) as T[];
  }

  get<T>(sql: string, ...params: unknown[]): T | undefined {
    return this.open().prepare(sql).get(...params) as T | undefined;
  }

  jobs(): JobRecord[] {
    return this.all<JobRecord>(`SELECT id, status, computer, fetched_by, backend, run_dir, reason, exit_code FROM jobs ORDER BY id`);
  }

  job(id: number): JobRecord | undefined {
    return this.get<JobRecord>(`SELECT id, status, computer, fetched_by, backend, run_dir, reason, exit_code FROM jobs WHERE id = ?`, id);
  }

  runs(routineId?: string): RunRecord[] {
    const cols = `id, routine_id, status, reason, exit_code, backend, run_dir, started_at`;
    return routineId === undefined
      ? this.all<RunRecord>(`SELECT ${cols} FROM runs ORDER BY rowid`)
      : this.all<RunRecord>(`SELECT ${cols} FROM runs WHERE routine_id = ? ORDER BY rowid`, routineId);
  }

  commands(computer?: string): CommandRecord[] {
    return computer === undefined
      ? this.all<CommandRecord>(`SELECT * FROM commands ORDER BY id`)
      : this.all<CommandRecord>(`SELECT * FROM commands WHERE computer = ? ORDER BY id`, computer);
  }

  worker(computer: string): WorkerRecord | undefined {
    return this.get<WorkerRecord>(`SELECT computer, last_seen, slots, running FROM workers WHERE computer = ?`, computer);
  }

  events(type: string): { id: number; message: string; job_id: number | null; run_id: string | null; routine_id: string | null }[] {
    return this.all(`SELECT id, message, job_id, run_id, routine_id FROM events WHERE type = ? ORDER BY id`, type);
  }

  close(): void {
    this.db?.close();
    this.db = null;
  }
}

export interface PoolOptions {
  /** Extra daemon environment (TEND_BATCH_SLOTS defaults to 0: one-off jobs go to the workers). */
  env?: Record<string, string>;
  /** A fixed API port, so a restarted daemon is found at the same address. */
  port?: number;
}

/** One daemon with its API, and the workers attached to it. */
export class Pool {
  daemon!: Daemon;
  api!: ApiFile;
  readonly db: Db;
  readonly workers = new Map<string, Worker>();
  private readonly tokens = new Map<string, string>();
  private env: Record<string, string>;

  private constructor(
    readonly dir: string,
    o: PoolOptions,
  ) {
    this.db = new Db(join(dir, 'data', 'tend.db'));
    this.env = { TEND_DAEMON_INTERVAL_MS: '200', TEND_BATCH_SLOTS: '0', ...(o.port ? { TEND_API_PORT: String(o.port) } : {}), ...o.env };
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  static async start(dir: string, o: PoolOptions = {}): Promise<Pool> {
    const p = new Pool(dir, o);
    mkdirSync(p.dataDir, { recursive: true });
    await p.startDaemon();
    return p;
  }

  async startDaemon(): Promise<Daemon> {
    this.daemon = new Daemon(this.dataDir, this.env);
    await this.daemon.ready(30_000);
    this.api = await this.daemon.serving(10_000);
    return this.daemon;
  }

  /** `tend daemon stop`: the owner exits; its jobs and the workers' jobs keep running. */
  async stopDaemon(): Promise<void> {
    const r = await tendAsync(this.dataDir, ['daemon', 'stop']);
    if (r.code !== 0) throw new Error(`tend daemon stop exited ${r.code}: ${r.stderr}\ndaemon log:\n${this.daemon.stderr.slice(-3000)}`);
    await this.daemon.exited;
  }

  /** `tend …` against the daemon's data dir (writes nudge the daemon). */
  tend(...args: string[]) {
    return tend(this.dataDir, args);
  }

  tendOk<T = unknown>(...args: string[]): T {
    return tendOk<T>(this.dataDir, args);
  }

  token(computer: string): string {
    let t = this.tokens.get(computer);
    if (!t) {
      t = this.tendOk<{ token: string }>('worker', 'token', computer, '--json').token;
      this.tokens.set(computer, t);
    }
    return t;
  }

  /** A worker (not started) for `computer`, with its data dir under the test's scratch dir. */
  worker(computer: string, batchjobs = 0, env: Record<string, string> = {}): Worker {
    const w = new Worker(computer, join(this.dir, `worker-${computer.split('@')[1]}`), () => this.api.url, this.token(computer), batchjobs, env);
    this.workers.set(computer, w);
    return w;
  }

  /** Until the daemon has heard from this worker after `since` (ms since the epoch). */
  async seen(w: Worker, since: number, timeoutMs = 20_000): Promise<void> {
    await waitFor(() => (this.db.worker(w.computer)?.last_seen ?? 0) >= since, timeoutMs, `${w.computer} to be seen by the daemon (log: ${w.log.slice(-400)})`);
  }

  /**
   * A request with `token`. With a worker token, a worker route is called the way a worker calls
   * it: naming the token's computer (query or body), unless the test names one itself.
   */
  http<T = unknown>(method: string, path: string, body?: unknown, token = this.api.token): Promise<HttpResult<T>> {
    const computer = [...this.tokens].find(([, t]) => t === token)?.[0];
    if (computer && path.startsWith('/api/worker/')) {
      if (method === 'GET' && !/[?&]computer=/.test(path)) path += `${path.includes('?') ? '&' : '?'}computer=${encodeURIComponent(computer)}`;
      else if (method !== 'GET' && typeof body === 'object' && body !== null && !('computer' in body)) body = { computer, ...body };
    }
    return http<T>(this.api.url, token, method, path, body);
  }

  /** Post one-off jobs over the API (each wakes waiting workers at once). */
  async postJobs(inputs: Record<string, unknown>[]): Promise<number[]> {
    const ids: number[] = [];
    for (const input of inputs) {
      const r = await this.http<{ id: number }>('POST', '/api/jobs', input);
      if (!r.body.ok) throw new Error(`POST /api/jobs: ${JSON.stringify(r.body.error)}`);
      ids.push(r.body.value!.id);
    }
    return ids;
  }

  /** Kill the workers, then whatever their jobs left running (jobs outlive workers by design). */
  async stopAll(): Promise<void> {
    for (const w of this.workers.values()) if (w.running) await w.kill('SIGKILL');
    for (const w of this.workers.values()) for (const dir of w.runDirs().values()) killJob(dir);
    for (const dir of runDirsUnder(this.dataDir).values()) killJob(dir);
    this.db.close();
  }
}

export const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** Pid of the routine a job directory launched (its wrapper's pid.json), or null. */
export function jobPid(runDir: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(runDir, 'pid.json'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

/** SIGKILL the process group of the job a directory records, if it is still that process. */
export function killJob(runDir: string): void {
  let rec: { pid: number; startTime: number | null };
  try {
    rec = JSON.parse(readFileSync(join(runDir, 'pid.json'), 'utf8')) as typeof rec;
  } catch {
    return;
  }
  if (rec.startTime === null || procStartTime(rec.pid) !== rec.startTime) return;
  try {
    process.kill(-rec.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

export function jobAlive(runDir: string): boolean {
  const pid = jobPid(runDir);
  return pid !== null && alive(pid);
}
