// `tend worker` of the built CLI as our child, with a data dir of its own: the worker agent of the
// pool tests, the e2e specs and the pool benchmark. Tracked like every process a test starts.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv, REPO, TEND, track } from './cli.js';

/** How a worker process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
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
  // Day directories only: runs/.waiters holds the waiter every job's run.sh links to.
  for (const day of readdirSync(root).filter((d) => /^\d{4}-\d{2}-\d{2}$/.test(d))) for (const id of readdirSync(join(root, day))) out.set(id, join(root, day, id));
  return out;
}
