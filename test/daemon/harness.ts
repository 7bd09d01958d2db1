// Real daemons as child processes of the built CLI, against scratch data dirs. Every wait has a
// deadline; every process a test starts is killed (by its own pid) when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import { alive, assertBuilt, childEnv, isTracked, killTracked, REPO, TEND, track } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

export { alive, assertBuilt, childEnv, killTracked, procStartTime, REPO, scratch, TEND, tend, tendAsync, tendOk, track, type CliResult } from '../helpers/cli.js';
export const FIXTURES = join(REPO, 'test', 'fixtures');

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

/**
 * The hooks of a file whose tests each use a scratch data dir (`current()`): the CLI is built
 * before any test; after each, the dir's daemon is stopped, every tracked process killed, the dir removed.
 */
export function useDaemonBox(current: () => { dir: string; remove: () => void } | undefined): void {
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    const box = current();
    if (!box) return;
    await stopOwner(box.dir);
    await killTracked();
    box.remove();
  });
}
