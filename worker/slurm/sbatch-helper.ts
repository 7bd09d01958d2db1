// sbatch through a small long-lived bash helper instead of a spawn from Node per job. A pass that
// submits hundreds of jobs would otherwise fork the whole daemon hundreds of times (several ms of
// the single thread each); a bash helper forks itself (small) and execs sbatch. Requests and
// answers are NUL-separated fields on the helper's stdin/stdout: arguments and environment values
// never appear on any command line, and any byte but NUL passes through unchanged.
//
// Each helper keeps the environment it was started with; a request carries only the variables to
// set and to unset relative to it, applied in a subshell, so nothing leaks from one job to the next.
// A helper answers its requests in order; several helpers run side by side. An idle helper exits;
// one that misses a deadline is killed (its requests fail, and submit reconciles by job name).
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { CommandResult } from './commands.js';

const SCRIPT = `set -u
bin=$1
errf=$(mktemp "\${TMPDIR:-/tmp}/tend-sbatch.XXXXXX") || exit 1
trap 'rm -f -- "$errf"' EXIT
field() { IFS= read -r -d '' "$1"; }
while field id; do
  field n || exit 0; args=(); for ((i = 0; i < n; i++)); do field a || exit 0; args+=("$a"); done
  field n || exit 0; sets=(); for ((i = 0; i < n; i++)); do field a || exit 0; sets+=("$a"); done
  field n || exit 0; unsets=(); for ((i = 0; i < n; i++)); do field a || exit 0; unsets+=("$a"); done
  out=$(
    for kv in "\${sets[@]}"; do export "$kv"; done
    for k in "\${unsets[@]}"; do unset "$k"; done
    exec "$bin" "\${args[@]}" 2> "$errf" < /dev/null
  )
  code=$?
  err=$(< "$errf")
  printf '%s\\0%s\\0%s\\0%s\\0' "$id" "$code" "$out" "$err"
done
`;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Pending {
  resolve: (r: CommandResult) => void;
  timer: NodeJS.Timeout;
}

class Helper {
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  readonly pending = new Map<number, Pending>();
  private buf = Buffer.alloc(0);
  private fields: string[] = [];
  private idle: NodeJS.Timeout | null = null;
  dead = false;

  constructor(
    file: string,
    readonly base: Record<string, string>,
    private readonly idleMs: number,
  ) {
    this.child = spawn('bash', ['-c', SCRIPT, 'tend-sbatch-helper', file], { env: base, stdio: ['pipe', 'pipe', 'ignore'], cwd: '/' });
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.on('exit', () => this.fail('the sbatch helper exited'));
    this.child.on('error', (err) => this.fail(`the sbatch helper could not run: ${err.message}`));
    this.child.stdin.on('error', () => this.fail('the sbatch helper stopped reading'));
    this.unrefIfIdle();
  }

  send(id: number, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, onTimeout: () => void): Promise<CommandResult> {
    const sets: string[] = [];
    // Names bash cannot export (BASH_FUNC_x%%, a-b) are left out, as from the helper's own environment.
    for (const [k, v] of Object.entries(env)) if (v !== undefined && NAME.test(k) && this.base[k] !== v) sets.push(`${k}=${v}`);
    const unsets = Object.keys(this.base).filter((k) => env[k] === undefined);
    const parts = [String(id), String(args.length), ...args, String(sets.length), ...sets, String(unsets.length), ...unsets];
    if (parts.some((p) => p.includes('\0'))) return Promise.resolve(failure('an argument or variable holds a NUL byte'));
    return new Promise((resolve) => {
      const timer = setTimeout(onTimeout, timeoutMs);
      this.pending.set(id, { resolve, timer });
      if (this.idle) clearTimeout(this.idle);
      this.idle = null;
      this.child.ref();
      (this.child.stdout as unknown as { ref?: () => void }).ref?.();
      this.child.stdin.write(`${parts.join('\0')}\0`);
    });
  }

  private onData(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    for (let nul = this.buf.indexOf(0); nul >= 0; nul = this.buf.indexOf(0)) {
      this.fields.push(this.buf.subarray(0, nul).toString('utf8'));
      this.buf = this.buf.subarray(nul + 1);
      if (this.fields.length === 4) {
        const [id, code, stdout, stderr] = this.fields as [string, string, string, string];
        this.fields = [];
        const p = this.pending.get(Number(id));
        if (!p) continue;
        this.pending.delete(Number(id));
        clearTimeout(p.timer);
        p.resolve({ code: Number(code), stdout, stderr, failure: null });
      }
    }
    this.unrefIfIdle();
  }

  private unrefIfIdle(): void {
    if (this.pending.size > 0 || this.dead) return;
    this.child.unref();
    (this.child.stdout as unknown as { unref?: () => void }).unref?.();
    if (!this.idle) {
      this.idle = setTimeout(() => this.close(), this.idleMs);
      this.idle.unref();
    }
  }

  fail(why: string): void {
    if (this.dead) return;
    this.dead = true;
    if (this.idle) clearTimeout(this.idle);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.resolve(failure(why));
    }
    this.pending.clear();
  }

  close(): void {
    this.fail('the sbatch helper was closed');
    this.child.stdin.end();
  }

  kill(why: string): void {
    this.fail(why);
    this.child.kill('SIGKILL');
  }
}

function failure(why: string): CommandResult {
  return { code: null, stdout: '', stderr: '', failure: why };
}

export interface SbatchHelperOptions {
  /** sbatch, or its path. */
  file: string;
  /** Helpers side by side (default 2). */
  size?: number;
  /** An idle helper exits after this long (default 30 s). */
  idleMs?: number;
}

export class SbatchHelpers {
  private helpers: Helper[] = [];
  private nextId = 1;

  constructor(private readonly o: SbatchHelperOptions) {}

  run(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<CommandResult> {
    this.helpers = this.helpers.filter((h) => !h.dead);
    const size = Math.max(1, this.o.size ?? 2);
    let helper = this.helpers.reduce<Helper | null>((best, h) => (!best || h.pending.size < best.pending.size ? h : best), null);
    if (!helper || (helper.pending.size > 0 && this.helpers.length < size)) {
      const base: Record<string, string> = {};
      for (const [k, v] of Object.entries(env)) if (v !== undefined && NAME.test(k)) base[k] = v;
      helper = new Helper(this.o.file, base, this.o.idleMs ?? 30_000);
      this.helpers.push(helper);
    }
    const h = helper;
    return h.send(this.nextId++, args, env, timeoutMs, () => h.kill(`sbatch did not finish within ${timeoutMs} ms`));
  }

  /** End every helper (they also end by themselves when idle). */
  close(): void {
    for (const h of this.helpers) h.close();
    this.helpers = [];
  }
}
