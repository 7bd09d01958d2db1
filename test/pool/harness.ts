// The worker pool on loopback, with real processes: one `tend daemon run` and `tend worker`
// processes, each with a data dir of its own, talking HTTP. State is read from the daemon's SQLite
// file (read-only); every wait has a deadline; every process is killed by its pid afterwards.
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
export const TEND = join(REPO, 'dist', 'main', 'cli', 'tend.js');
export const POOL_FIXTURES = join(REPO, 'test', 'pool', 'fixtures');

export function assertBuilt(): void {
  if (!existsSync(TEND)) throw new Error(`${TEND} not found: these tests run the built CLI; run \`npm run build\` first`);
}

/**
 * Resolve with the first truthy value `fn` returns, checking every `intervalMs`; reject once
 * `timeoutMs` has passed, naming what was awaited and the last value or error seen.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition', intervalMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${seen})`);
    }
    await delay(intervalMs);
  }
}

/** The environment of a child `tend`: the parent's TEND_* settings never leak in. */
export function childEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_')) env[k] = v;
  return { ...env, TZ: 'UTC', NO_COLOR: '1', TEND_DATA_DIR: dataDir, ...extra };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `tend ARGS…` synchronously. */
export function tend(dataDir: string, args: string[], env: Record<string, string> = {}): CliResult {
  assertBuilt();
  const r = spawnSync(process.execPath, [TEND, ...args], { cwd: REPO, env: childEnv(dataDir, env), encoding: 'utf8', timeout: 45_000 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `tend ARGS…` without blocking this process: needed whenever the command waits on a child of
 * ours (`daemon stop`), whose stderr pipe we must keep draining meanwhile.
 */
export function tendAsync(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  assertBuilt();
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [TEND, ...args], { cwd: REPO, env: childEnv(dataDir, env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', rej);
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Like `tend` but the command must exit 0; parses stdout when `--json` is among the args. */
export function tendOk<T = unknown>(dataDir: string, args: string[], env: Record<string, string> = {}): T {
  const r = tend(dataDir, args, env);
  if (r.code !== 0) throw new Error(`tend ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
}

/** Pids that must not outlive the test. */
const owned = new Set<number>();
export function track(pid: number): number {
  owned.add(pid);
  return pid;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A zombie is dead for every purpose here.
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

/** SIGKILL every tracked process still alive and wait until it is gone. */
export async function killTracked(): Promise<void> {
  for (const pid of owned) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await waitFor(() => [...owned].every((p) => !alive(p)), 10_000, 'tracked processes to die');
  owned.clear();
}

/** /proc start time of a pid (field 22), or null. */
export function procStartTime(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
  } catch {
    return null;
  }
}

export function scratch(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // Retries: a job killed during cleanup may still have its wrapper writing the exit sentinel.
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StateFile {
  pid: number;
  lastHeartbeat: string;
  lastPass: unknown;
}

export function readState(dataDir: string): StateFile | null {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'daemon.state.json'), 'utf8')) as StateFile;
  } catch {
    return null;
  }
}

function pidFileOwner(dataDir: string): number | null {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'daemon.pid'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

/** `tend daemon run` in the foreground, as our child. */
export class Daemon {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  exit: Exit | null = null;
  stderr = '';

  constructor(
    readonly dataDir: string,
    env: Record<string, string> = {},
  ) {
    assertBuilt();
    this.child = spawn(process.execPath, [TEND, 'daemon', 'run'], { cwd: REPO, env: childEnv(dataDir, env), stdio: ['ignore', 'ignore', 'pipe'] });
    track(this.child.pid!);
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.exited = new Promise((res) =>
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        res(this.exit);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Until it owns the data dir and has finished a pass. */
  async ready(timeoutMs = 20_000): Promise<this> {
    await waitFor(
      () => {
        if (this.exit) throw new Error(`daemon ${this.pid} exited ${this.exit.code ?? this.exit.signal}: ${this.stderr}`);
        const s = readState(this.dataDir);
        return s?.pid === this.pid && s.lastPass !== null && pidFileOwner(this.dataDir) === this.pid;
      },
      timeoutMs,
      `daemon ${this.pid} to own ${this.dataDir} and pass`,
    );
    return this;
  }
}

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

export interface ApiFile {
  url: string;
  token: string;
}

export function readApi(dataDir: string): ApiFile | null {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'api.json'), 'utf8')) as ApiFile;
  } catch {
    return null;
  }
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

/** `tend worker …` as our child, with a data dir of its own. */
export class Worker {
  child: ChildProcess | null = null;
  exited: Promise<Exit> = Promise.resolve({ code: null, signal: null });
  exit: Exit | null = null;
  log = '';
  starts = 0;

  constructor(
    readonly computer: string,
    readonly dataDir: string,
    readonly server: () => string,
    readonly token: string,
    readonly batchjobs: number,
    readonly env: Record<string, string> = {},
  ) {}

  /** The short name jobs see in $POOL_WORKER (the host part of the computer). */
  get name(): string {
    return this.computer.split('@')[1]!;
  }

  start(): this {
    mkdirSync(this.dataDir, { recursive: true });
    const args = [TEND, 'worker', '--server', this.server(), '--computer', this.computer, '--batchjobs', String(this.batchjobs), '--data-dir', this.dataDir];
    const child = spawn(process.execPath, args, {
      cwd: REPO,
      env: childEnv(this.dataDir, { TEND_WORKER_TOKEN: this.token, POOL_WORKER: this.name, ...this.env }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.child = child;
    this.starts++;
    this.exit = null;
    track(child.pid!);
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.log += s));
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
    return this;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  get running(): boolean {
    return this.child !== null && this.exit === null;
  }

  /** Signal it and wait until it is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (!this.running) return this.exit ?? { code: null, signal: null };
    this.child!.kill(signal);
    return this.exited;
  }

  /** Job directories under this worker's data dir: runId → path. */
  runDirs(): Map<string, string> {
    return runDirsUnder(this.dataDir);
  }
}

export function runDirsUnder(dataDir: string): Map<string, string> {
  const out = new Map<string, string>();
  const root = join(dataDir, 'runs');
  if (!existsSync(root)) return out;
  for (const day of readdirSync(root)) for (const id of readdirSync(join(root, day))) out.set(id, join(root, day, id));
  return out;
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
    this.api = await waitFor(
      () => {
        const a = readApi(this.dataDir);
        return a && this.daemon.stderr.includes(a.url) ? a : null;
      },
      10_000,
      'api.json of the new daemon',
    );
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

  http<T = unknown>(method: string, path: string, body?: unknown, token = this.api.token): Promise<HttpResult<T>> {
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
