// Real daemons and CLI calls of the built `tend` against scratch data dirs, for the MCP, metrics
// and webhook tests. Every wait has a deadline; every process a test starts is killed (by its own
// pid) when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertBuilt, childEnv, REPO, TEND, track } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

export { alive, assertBuilt, childEnv, killTracked, REPO, scratch, TEND, tend, tendAsync, tendOk, track, type CliResult } from '../helpers/cli.js';

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
