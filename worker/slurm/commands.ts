// Running Slurm's client commands: always an argument array through execFile (no shell), with a
// deadline, a bounded number at once (a pass that submits 200 jobs must not fork 200 sbatch at
// the same moment), and times printed as epoch seconds (SLURM_TIME_FORMAT=%s) so nothing depends
// on the controller's or this machine's time zone. Tests swap the runner to count or fake calls.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { SbatchHelpers } from './sbatch-helper.js';

export type SlurmCommand = 'sbatch' | 'squeue' | 'sacct' | 'scontrol' | 'scancel' | 'sinfo';

export interface CommandResult {
  /** Exit status; null when the command could not run or was killed (timeout). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not run to an exit status: not found, timed out … */
  failure: string | null;
}

export interface RunOptions {
  /** The whole environment of the command (default: this process's, for queries). */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export interface SlurmRunner {
  run(cmd: SlurmCommand, args: string[], opts?: RunOptions): Promise<CommandResult>;
}

export interface ExecRunnerOptions {
  /** Directory holding the Slurm commands; null: found on PATH. */
  binDir?: string | null;
  timeoutMs?: number;
  /** Commands running at once (default 4). */
  maxConcurrent?: number;
  /** sbatch runs through this many long-lived bash helpers (sbatch-helper.ts); 0: one spawn each. Default 2. */
  sbatchHelpers?: number;
}

/** Variables that would change what a query prints or where it goes. */
const QUERY_ENV_DROP = /^(SQUEUE_|SACCT_|SINFO_|SCONTROL_|SLURM_TIME_FORMAT$|SLURM_CLUSTERS$|SLURM_CONF_OUT)/;

export function queryEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && !QUERY_ENV_DROP.test(k)) env[k] = v;
  env['SLURM_TIME_FORMAT'] = '%s';
  env['LC_ALL'] = 'C';
  return env;
}

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}

  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export function execRunner(opts: ExecRunnerOptions = {}): SlurmRunner {
  const gate = new Semaphore(Math.max(1, opts.maxConcurrent ?? 4));
  const defaultTimeout = opts.timeoutMs ?? 20_000;
  const helperCount = opts.sbatchHelpers ?? 2;
  const helpers = helperCount > 0 ? new SbatchHelpers({ file: opts.binDir ? join(opts.binDir, 'sbatch') : 'sbatch', size: helperCount }) : null;
  // One request per helper at a time: a queued request's deadline starts when it is sent.
  const helperGate = new Semaphore(Math.max(1, helperCount));
  return {
    run(cmd, args, o = {}) {
      const file = opts.binDir ? join(opts.binDir, cmd) : cmd;
      if (cmd === 'sbatch' && helpers) return helperGate.use(() => helpers.run(args, o.env ?? process.env, o.timeoutMs ?? defaultTimeout));
      return gate.use(
        () =>
          new Promise<CommandResult>((resolve) => {
            execFile(
              file,
              args,
              { env: o.env ?? queryEnv(), timeout: o.timeoutMs ?? defaultTimeout, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
              (err, stdout, stderr) => {
                if (!err) return resolve({ code: 0, stdout, stderr, failure: null });
                const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string | null };
                if (typeof e.code === 'number') return resolve({ code: e.code, stdout, stderr, failure: null });
                let failure: string;
                if (e.code === 'ENOENT') failure = `${cmd} not found${opts.binDir ? ` in ${opts.binDir}` : ' on PATH'} (are Slurm's client commands installed?)`;
                else if (e.killed || e.signal) failure = `${cmd} did not finish within ${o.timeoutMs ?? defaultTimeout} ms`;
                else failure = `${cmd} could not run: ${e.message}`;
                resolve({ code: null, stdout, stderr, failure });
              },
            );
          }),
      );
    },
  };
}

/** One line saying why a command failed. */
export function describeFailure(cmd: SlurmCommand, r: CommandResult): string {
  if (r.failure) return r.failure;
  const text = (r.stderr.trim() || r.stdout.trim()).split('\n').filter(Boolean).slice(-2).join(' / ');
  return `${cmd} exited ${r.code}${text ? `: ${text.slice(0, 400)}` : ''}`;
}

/** The controller could not be reached (as opposed to a refusal of the request itself). */
export function controllerUnreachable(r: CommandResult): boolean {
  return /unable to contact slurm controller|connection refused|socket timed out|zero bytes were transmitted|communication connection failure|connect failure/i.test(r.stderr + r.stdout);
}
