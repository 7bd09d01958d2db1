// Real daemons and CLI calls of the built `tend` against scratch data dirs, for the MCP, metrics
// and webhook tests. Every wait has a deadline; every process a test starts is killed (by its own
// pid) when the test ends.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait.js';

export const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
export const TEND = join(REPO, 'dist', 'main', 'cli', 'tend.js');

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

export function tend(dataDir: string, args: string[], env: Record<string, string> = {}): CliResult {
  assertBuilt();
  const r = spawnSync(process.execPath, [TEND, ...args], { cwd: REPO, env: childEnv(dataDir, env), encoding: 'utf8', timeout: 45_000 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Like `tend`, without blocking this process (whose servers the command may need to reach). */
export function tendAsync(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [TEND, ...args], { cwd: REPO, env: childEnv(dataDir, env), encoding: 'utf8', timeout: 45_000 }, (err, stdout, stderr) => {
      const code = (err as { code?: unknown } | null)?.code;
      if (err && typeof code !== 'number') return reject(err);
      resolve({ code: typeof code === 'number' ? code : 0, stdout, stderr });
    });
    if (child.pid) track(child.pid);
  });
}

/** The command must exit 0; stdout parsed when `--json` is among the args. */
export function tendOk<T = unknown>(dataDir: string, args: string[], env: Record<string, string> = {}): T {
  const r = tend(dataDir, args, env);
  if (r.code !== 0) throw new Error(`tend ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return (args.includes('--json') ? JSON.parse(r.stdout) : r.stdout) as T;
}

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
      /* gone */
    }
  }
  await waitFor(() => [...owned].every((p) => !alive(p)), 10_000, 'tracked processes to die');
  owned.clear();
}

export function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** `tend daemon run` in the foreground, as our child. */
export class Daemon {
  readonly child: ChildProcess;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  stderr = '';

  constructor(
    readonly dataDir: string,
    env: Record<string, string> = {},
  ) {
    assertBuilt();
    this.child = spawn(process.execPath, [TEND, 'daemon', 'run'], { cwd: REPO, env: childEnv(dataDir, env), stdio: ['ignore', 'ignore', 'pipe'] });
    track(this.child.pid!);
    this.child.stderr!.setEncoding('utf8').on('data', (s: string) => (this.stderr += s));
    this.child.on('exit', (code, signal) => (this.exit = { code, signal }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Until it owns the data dir, has passed once and serves its API. */
  async ready(timeoutMs = 20_000): Promise<this> {
    await waitFor(
      () => {
        if (this.exit) throw new Error(`daemon ${this.pid} exited ${this.exit.code ?? this.exit.signal}: ${this.stderr}`);
        const s = readJson<{ pid: number; lastPass: unknown }>(join(this.dataDir, 'daemon.state.json'));
        const pid = readJson<{ pid: number }>(join(this.dataDir, 'daemon.pid'));
        return s?.pid === this.pid && s.lastPass !== null && pid?.pid === this.pid;
      },
      timeoutMs,
      `daemon ${this.pid} to own ${this.dataDir} and pass`,
    );
    return this;
  }

  /** The API address and admin token it wrote to api.json. */
  api(): { url: string; token: string } {
    const a = readJson<{ url: string; token: string; pid: number }>(join(this.dataDir, 'api.json'));
    if (!a || a.pid !== this.pid) throw new Error(`daemon ${this.pid} wrote no api.json`);
    return a;
  }

  /** SIGTERM, and wait until it has exited. */
  async stop(): Promise<void> {
    if (this.exit) return;
    this.child.kill('SIGTERM');
    await waitFor(() => this.exit !== null, 15_000, `daemon ${this.pid} to exit`);
  }
}

export function scratch(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
