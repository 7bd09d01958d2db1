// `tend daemon run` of the built CLI as our child, against a scratch data dir: the one daemon
// harness of the vitest tests, the Playwright specs and the benchmarks. Every wait has a
// deadline; every daemon is tracked, so `killTracked()` removes whatever a test left alive.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alive, assertBuilt, childEnv, isTracked, REPO, TEND, track } from './cli.js';
import { waitFor, within } from './wait.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() at exit. */
  at: number;
}

/** Serve no HTTP API (a daemon, or one a CLI command starts). */
export const NO_API: Record<string, string> = { TEND_API: 'off' };
/** A daemon that serves no API and passes every 100 ms (what the engine's integration tests want). */
export const QUIET_FAST: Record<string, string> = { ...NO_API, TEND_DAEMON_INTERVAL_MS: '100' };

export interface DaemonOptions {
  /** Options for Node itself, before the CLI (e.g. --cpu-prof for a benchmark). */
  nodeArgs?: string[];
}

export class Daemon {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  exit: Exit | null = null;
  stderr = '';
  stdout = '';

  /** `env` is added to the child's (TEND_* of this process never leak in); `args` follow `daemon run`. */
  constructor(
    readonly dataDir: string,
    env: Record<string, string> = {},
    args: string[] = [],
    o: DaemonOptions = {},
  ) {
    assertBuilt();
    this.child = spawn(process.execPath, [...(o.nodeArgs ?? []), TEND, 'daemon', 'run', ...args], { cwd: REPO, env: childEnv(dataDir, env), stdio: ['ignore', 'pipe', 'pipe'] });
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
  async ready(timeoutMs = 30_000): Promise<this> {
    await this.unlessExited(
      waitFor(
        () => {
          const s = readState(this.dataDir);
          return s?.pid === this.pid && s.lastPass !== null && readPidFile(this.dataDir)?.pid === this.pid;
        },
        timeoutMs,
        `daemon ${this.pid} to own ${this.dataDir} and pass`,
      ),
    );
    return this;
  }

  /** Until it has written api.json (its address and admin token) and answers /health there. */
  async serving(timeoutMs = 20_000): Promise<ApiFile> {
    return this.unlessExited(
      waitFor(
        async () => {
          const a = readApi(this.dataDir);
          if (a?.pid !== this.pid) return null;
          const res = await fetch(`${a.url}/health`, { signal: AbortSignal.timeout(2000) });
          return res.ok ? a : null;
        },
        timeoutMs,
        `daemon ${this.pid} to serve its API`,
        50,
      ),
    );
  }

  /** `wait`, unless the daemon exits first: then at once, with what it said. */
  private unlessExited<T>(wait: Promise<T>): Promise<T> {
    const died = this.exited.then((e) => {
      throw new Error(`daemon ${this.pid} exited ${e.code ?? e.signal}: ${this.stderr}`);
    });
    died.catch(() => undefined);
    return Promise.race([wait, died]);
  }

  /** The API address and admin token it wrote to api.json. */
  api(): ApiFile {
    const a = readApi(this.dataDir);
    if (!a || a.pid !== this.pid) throw new Error(`daemon ${this.pid} wrote no api.json`);
    return a;
  }

  /** The time of its last pass (changes once per pass). */
  lastPass(): string | null {
    const s = readState(this.dataDir);
    return s?.pid === this.pid ? s.lastHeartbeat : null;
  }

  /** SIGTERM and wait until it has exited (running jobs keep running). */
  async stop(timeoutMs = 15_000): Promise<Exit> {
    if (this.exit) return this.exit;
    this.child.kill('SIGTERM');
    return within(this.exited, timeoutMs, `daemon ${this.pid} to exit`);
  }

  async kill9(): Promise<Exit> {
    if (this.exit) return this.exit;
    this.child.kill('SIGKILL');
    return this.exited;
  }
}

export interface PidFile {
  pid: number;
  startTime: number | null;
  startedAt: string;
  kind: string;
}

export interface StateFile {
  pid: number;
  lastHeartbeat: string;
  lastPass: unknown;
  api: { url: string } | null;
  /** The status counts the daemon saved (see main/engine/daemon/status-counts.ts). */
  counts?: Record<string, unknown>;
}

export interface ApiFile {
  url: string;
  token: string;
  pid: number;
}

export function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

export const readPidFile = (dataDir: string) => readJson<PidFile>(join(dataDir, 'daemon.pid'));
export const readState = (dataDir: string) => readJson<StateFile>(join(dataDir, 'daemon.state.json'));
export const readApi = (dataDir: string) => readJson<ApiFile>(join(dataDir, 'api.json'));

/** Stop the daemon that owns `dataDir` if a test started it (tracked), waiting until it has exited. */
export async function stopOwner(dataDir: string): Promise<void> {
  const rec = readPidFile(dataDir);
  if (!rec || !isTracked(rec.pid) || !alive(rec.pid)) return;
  try {
    process.kill(rec.pid, 'SIGTERM');
  } catch {
    return;
  }
  await waitFor(() => !alive(rec.pid), 15_000, `daemon ${rec.pid} to exit`);
}
