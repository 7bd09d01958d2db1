// Real daemons as child processes of the built CLI, against scratch data dirs. Every wait has a
// deadline; every process a test starts is killed (by its own pid) when the test ends.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait.js';

export const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
export const TEND = join(REPO, 'dist', 'main', 'cli', 'tend.js');
export const FIXTURES = join(REPO, 'test', 'fixtures');

export function assertBuilt(): void {
  if (!existsSync(TEND)) throw new Error(`${TEND} not found: these tests run the built CLI; run \`npm run build\` first`);
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

/** `tend ARGS…` synchronously (ensure, stop, status, doctor return on their own). */
export function tend(dataDir: string, args: string[], env: Record<string, string> = {}): CliResult {
  assertBuilt();
  const r = spawnSync(process.execPath, [TEND, ...args], { cwd: REPO, env: childEnv(dataDir, env), encoding: 'utf8', timeout: 45_000 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Like `tend` but the command must exit 0; parses stdout when `--json` is among the args. */
export function tendOk<T = unknown>(dataDir: string, args: string[], env: Record<string, string> = {}): T {
  const r = tend(dataDir, args, env);
  if (r.code !== 0) throw new Error(`tend ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
}

/** Pids that must not outlive the test (daemons started by `ensure` are not our children). */
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
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/s.test(stat);
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

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() at exit. */
  at: number;
}

/** `tend daemon run` in the foreground, as our child. */
export class Daemon {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  exit: Exit | null = null;
  stderr = '';
  stdout = '';

  constructor(
    readonly dataDir: string,
    env: Record<string, string> = {},
    args: string[] = [],
  ) {
    assertBuilt();
    this.child = spawn(process.execPath, [TEND, 'daemon', 'run', ...args], { cwd: REPO, env: childEnv(dataDir, env), stdio: ['ignore', 'pipe', 'pipe'] });
    track(this.child.pid!);
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.child.stdout!.setEncoding('utf8').on('data', (s: string) => (this.stdout += s));
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal, at: performance.now() };
        resolve(this.exit);
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Until it owns the data dir and has finished a pass (what `ensure` waits for too). */
  async ready(timeoutMs = 20_000): Promise<this> {
    await waitFor(
      () => {
        if (this.exit) throw new Error(`daemon ${this.pid} exited ${this.exit.code ?? this.exit.signal}: ${this.stderr}`);
        const s = readState(this.dataDir);
        return s?.pid === this.pid && s.lastPass !== null && readPidFile(this.dataDir)?.pid === this.pid;
      },
      timeoutMs,
      `daemon ${this.pid} to own ${this.dataDir} and pass`,
    );
    return this;
  }
}

export interface PidFile {
  pid: number;
  startTime: number | null;
  startedAt: string;
  kind: string;
}

export function readPidFile(dataDir: string): PidFile | null {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'daemon.pid'), 'utf8')) as PidFile;
  } catch {
    return null;
  }
}

export interface StateFile {
  pid: number;
  lastHeartbeat: string;
  lastPass: unknown;
  api: { url: string } | null;
}

export function readState(dataDir: string): StateFile | null {
  try {
    return JSON.parse(readFileSync(join(dataDir, 'daemon.state.json'), 'utf8')) as StateFile;
  } catch {
    return null;
  }
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
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

/** Stop the daemon that owns `dataDir` if a test started it (tracked), waiting until it has exited. */
export async function stopOwner(dataDir: string): Promise<void> {
  const rec = readPidFile(dataDir);
  if (!rec || !owned.has(rec.pid) || !alive(rec.pid)) return;
  try {
    process.kill(rec.pid, 'SIGTERM');
  } catch {
    return;
  }
  await waitFor(() => !alive(rec.pid), 15_000, `daemon ${rec.pid} to exit`);
}
