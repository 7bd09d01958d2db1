// The built `tend` as a child process against scratch data dirs, and the processes a test owns.
// Shared by every test that runs the CLI (daemons: ./daemon.ts) and by the benchmarks. Every
// wait has a deadline; every process a test starts is killed by its own pid when the test ends.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

/** The repository: two levels up from here, or three when the benchmarks run this file from dist/test/helpers. */
export const REPO = ((up) => (basename(up) === 'dist' ? dirname(up) : up))(resolve(fileURLToPath(new URL('../../', import.meta.url))));
export const TEND = join(REPO, 'dist', 'main', 'cli', 'tend.js');
/** The shell fixtures shared by the test folders. */
export const FIXTURES = join(REPO, 'test', 'fixtures');

/** A `tend` command that hangs is killed after this long (a test fails rather than hangs). */
const CLI_TIMEOUT_MS = 60_000;

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

export interface TendOptions {
  cwd?: string;
  /** Written to the command's stdin (else it reads an empty one). */
  input?: string;
}

/** `tend ARGS…` synchronously (commands that return on their own: ensure, stop, status, doctor…). */
export function tend(dataDir: string, args: string[], env: Record<string, string> = {}, o: TendOptions = {}): CliResult {
  assertBuilt();
  const r = spawnSync(process.execPath, [TEND, ...args], { cwd: o.cwd ?? REPO, env: childEnv(dataDir, env), input: o.input ?? '', encoding: 'utf8', timeout: CLI_TIMEOUT_MS });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * `tend ARGS…` without blocking this process: needed whenever the command waits on a child of
 * ours (`daemon stop`, whose stderr pipe we must keep draining) or on a server in this process.
 */
export function tendAsync(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  assertBuilt();
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [TEND, ...args], { cwd: REPO, env: childEnv(dataDir, env), stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid) track(child.pid);
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      rej(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
  });
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

export function isTracked(pid: number): boolean {
  return owned.has(pid);
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

/** `tend`, `tendOk` and `childEnv` with `base` under every call's own environment (e.g. TEND_API=off). */
export function cliWith(base: Record<string, string>) {
  return {
    childEnv: (dataDir: string, extra: Record<string, string> = {}) => childEnv(dataDir, { ...base, ...extra }),
    tend: (dataDir: string, args: string[], env: Record<string, string> = {}) => tend(dataDir, args, { ...base, ...env }),
    tendOk: <T = unknown>(dataDir: string, args: string[], env: Record<string, string> = {}) => tendOk<T>(dataDir, args, { ...base, ...env }),
  };
}
