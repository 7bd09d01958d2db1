// Batch waiters: waiters this backend keeps running between batch jobs (batch-waiter-script.ts),
// each serving one job at a time, so that a job is a message to a waiting shell rather than a
// waiter's start through the spawn helper. There are never more than `max` (the host's slots):
// a job that finds none idle starts one and is its first; one left idle for IDLE_MS leaves.
//
// Where perl is installed the waiter is perl (batch-waiter-perl.ts: a job is a fork and the
// routine's exec, its session made by setsid(2)); else, or where TEND_JOB_SHELL names the shell
// waiters run in, it is that POSIX shell (batch-waiter-script.ts), which needs an exec of setsid
// per job. Both speak the same answers and leave the same job directory.
//
// A waiter is started only through the spawn helper, whose pipe is its lifeline: its stdin is a
// socket only this process holds, and end of file on it (this process exited or was killed)
// makes it leave once the job it runs, if any, is over. Its answers come back on that socket.
import type { Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { inheritedEnv } from '../inherited-env.js';
import { processProvider } from '../jobdir/proc.js';
import { envChanges, perlBatchWaiterScript, perlJobMessage } from './batch-waiter-perl.js';
import { batchJobMessage, batchWaiterScript, envAssignments, sourceScript } from './batch-waiter-script.js';
import { sharedCopy } from './shared-waiter.js';
import { standbyHelper } from './spawner.js';
import { findTool, jobShell, setsidArgv, type WaiterTools } from './tools.js';

/** How long a waiter waits for its next job before it leaves. */
export const IDLE_MS = 10_000;

/** The waiter's first answer to a job: `gone` if it left (or its socket failed) before answering. */
export type Answer = 'started' | 'taken' | 'refused' | 'over' | 'gone';

/** A waiter's program: perl, or a POSIX shell. */
export interface WaiterScript {
  kind: 'perl' | 'sh';
  text: string;
}

export interface BatchWaiter {
  /** The waiter's pid (from the helper). */
  pid: number;
  kind: WaiterScript['kind'];
  /** What it was started with: its script, and the environment its jobs' assignments start from. */
  text: string;
  env: Readonly<Record<string, string>>;
}

interface Entry extends BatchWaiter {
  socket: Socket | null;
  state: 'starting' | 'idle' | 'busy' | 'gone';
  /** The job it runs, and who waits for its first answer. */
  runId: string | null;
  answer: ((a: Answer) => void) | null;
  /** It has answered a job: it runs. */
  answered: boolean;
  buffered: string;
  timer: NodeJS.Timeout | null;
  /** Settles once it is up (its socket here) or gone. */
  up: Promise<void>;
}

export interface BatchWaiterOptions {
  dataDir: string;
  tools?: WaiterTools | undefined;
  killGraceMs?: number | undefined;
  /** At most this many waiters (the host's slots). */
  max: number;
  /** A job a waiter ran is over (sentinel written, leftovers stopped), or its waiter left mid-job. */
  onOver: (runId: string) => void;
  /** A waiter that has not answered a job by then is let go (it is stuck): the job's first answer is `gone`. */
  answerTimeoutMs: number;
}

export class BatchWaiters {
  private readonly all = new Set<Entry>();
  private readonly dir: string;
  private readonly texts = new Map<string, WaiterScript>();
  /** A perl waiter left before its first answer (perl without its POSIX module, say): sh waiters from then on. */
  private perlFailed = false;

  constructor(private readonly o: BatchWaiterOptions) {
    this.dir = join(o.dataDir, 'runs', '.waiters');
  }

  /** The script waiters run now (tools, grace, process provider and umask decide it); null without setsid or perl. */
  script(): WaiterScript | null {
    const provider = processProvider().name;
    const key = `${provider}|${process.umask()}|${this.perlFailed}`;
    let script = this.texts.get(key);
    if (script === undefined) {
      const o = { provider, leftoverGraceMs: this.o.killGraceMs, home: this.dir };
      if (!this.perlFailed && !this.o.tools?.shell?.trim() && this.perl()) script = { kind: 'perl', text: perlBatchWaiterScript(o) };
      else {
        const setsid = setsidArgv(this.o.tools?.perlSetsid);
        if (!setsid) return null;
        script = { kind: 'sh', text: batchWaiterScript({ ...o, setsid }) };
      }
      this.texts.set(key, script);
    }
    return script;
  }

  /**
   * A job for `waiter`, in its language: null when it cannot be said there (an sh waiter, and a
   * place holding a newline or a variable the shell keeps to itself): the job starts the ordinary way.
   */
  message(waiter: BatchWaiter, runDir: string, cwd: string, argv: readonly string[], env: Readonly<Record<string, string>>, manifest: string): string | null {
    if (waiter.kind === 'perl') return perlJobMessage(runDir, cwd, argv, envChanges(waiter.env, env), manifest);
    const assignments = envAssignments(waiter.env, env);
    return assignments === null ? null : batchJobMessage(runDir, cwd, argv, assignments, manifest);
  }

  /**
   * A waiter running `script` for one job, now busy: an idle one, else one started for it (if there
   * is room), once it is up. Null: none (the job starts the ordinary way).
   */
  take(script: WaiterScript): BatchWaiter | Promise<BatchWaiter | null> | null {
    for (const w of this.all) {
      if (w.state !== 'idle' || w.text !== script.text || !w.socket || w.socket.destroyed) continue;
      this.busy(w);
      return w;
    }
    const w = this.start(script);
    return w ? w.up.then(() => (w.state === 'busy' ? w : null)) : null;
  }

  /** Give a taken waiter its job; resolves with its first answer. */
  run(waiter: BatchWaiter, runId: string, message: string): Promise<Answer> {
    const w = waiter as Entry;
    return new Promise((resolve) => {
      if (w.state !== 'busy' || !w.socket) return resolve('gone');
      w.runId = runId;
      // Waited on until its first answer (a launch in flight keeps this process up), then held only.
      const socket = w.socket;
      socket.ref();
      const silent = setTimeout(() => this.gone(w), this.o.answerTimeoutMs);
      w.answer = (a) => {
        clearTimeout(silent);
        socket.unref();
        resolve(a);
      };
      socket.write(message, (err) => {
        if (err) this.gone(w);
      });
    });
  }

  /** A taken waiter that was given no job goes back to the pool. */
  release(waiter: BatchWaiter): void {
    const w = waiter as Entry;
    if (w.state === 'busy' && w.runId === null) this.idle(w);
  }

  /** How many are running, by state (tests, the bench). */
  counts(): Record<Entry['state'], number> {
    const c = { starting: 0, idle: 0, busy: 0, gone: 0 };
    for (const w of this.all) c[w.state]++;
    return c;
  }

  /** A new waiter, busy from the start: it is for the job that asked. */
  private start({ kind, text }: WaiterScript): Entry | null {
    const helper = standbyHelper(this.o.tools?.spawner ?? true);
    if (!helper || this.all.size >= this.o.max) return null;
    let argv: string[];
    let file: string;
    try {
      file = resolve(sharedCopy(this.dir, text, true, kind === 'perl' ? 'pl' : 'sh'));
      // An sh waiter's commands come from the socket (-s), the first sourcing its script: a job is
      // then parsed from the shell's input in blocks, not read by `read` a system call per byte.
      argv = kind === 'perl' ? [this.perl() as string, file] : [...jobShell(this.o.tools?.shell), '-s', file];
    } catch {
      return null; // jobs start the ordinary way
    }
    // perl reads PERL5OPT, PERL5LIB and the like at its start: not the waiter's business. They
    // stay in the jobs' environment (they differ from the waiter's, so each job sets them).
    const env = kind === 'perl' ? Object.fromEntries(Object.entries(inheritedEnv()).filter(([k]) => !k.startsWith('PERL'))) : inheritedEnv();
    let up!: () => void;
    const w: Entry = { pid: 0, kind, text, env, socket: null, state: 'starting', runId: null, answer: null, answered: false, buffered: '', timer: null, up: new Promise<void>((r) => (up = r)) };
    this.all.add(w);
    const started = helper.launchPiped({ file: argv[0] as string, args: argv.slice(1), cwd: this.dir, env, log: join(this.dir, 'batch-waiter.log') }, () => this.gone(w));
    started.started
      .then(
        ({ pid, stdin }) => {
          w.pid = pid;
          // No pipe passed (the helper could not send it, and closed its copy): it leaves by itself.
          if (!stdin || w.state === 'gone') {
            stdin?.destroy();
            return this.gone(w);
          }
          w.socket = stdin;
          if (kind === 'sh') stdin.write(sourceScript(file));
          stdin.setEncoding('utf8');
          stdin.on('error', () => this.gone(w));
          stdin.on('close', () => this.gone(w));
          stdin.on('data', (chunk: string) => this.heard(w, chunk));
          // Held, not waited on: it keeps no process alive (at exit the socket closes, and the waiter leaves).
          stdin.unref();
          this.busy(w);
        },
        () => this.gone(w),
      )
      .finally(up);
    return w;
  }

  private perl(): string | null {
    return this.o.tools?.perl ?? findTool('perl');
  }

  private busy(w: Entry): void {
    w.state = 'busy';
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
  }

  private heard(w: Entry, chunk: string): void {
    w.buffered += chunk;
    for (let nl = w.buffered.indexOf('\n'); nl >= 0; nl = w.buffered.indexOf('\n')) {
      const line = w.buffered.slice(0, nl);
      w.buffered = w.buffered.slice(nl + 1);
      const answer = w.answer;
      if (line === 'started' || line === 'taken' || line === 'refused' || line === 'over') {
        w.answered = true;
        w.answer = null;
        answer?.(line);
      }
      if (line === 'taken' || line === 'refused') {
        w.runId = null;
        this.idle(w);
      } else if (line === 'over') {
        const runId = w.runId;
        w.runId = null;
        this.idle(w);
        if (runId !== null) this.o.onOver(runId);
      }
    }
  }

  private idle(w: Entry): void {
    if (w.state === 'gone') return;
    w.state = 'idle';
    if (w.timer) clearTimeout(w.timer);
    w.timer = setTimeout(() => w.socket?.destroy(), IDLE_MS);
    w.timer.unref();
  }

  /** It left (or its socket failed: then it leaves at end of file). A job it ran is over as far as it goes. */
  private gone(w: Entry): void {
    if (w.state === 'gone') return;
    // Gone as it started, or with its first job unanswered: a perl that cannot run the waiter.
    if (w.kind === 'perl' && !w.answered && (w.state === 'starting' || w.answer !== null)) this.perlFailed = true;
    w.state = 'gone';
    this.all.delete(w);
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
    w.socket?.destroy();
    const { answer, runId } = w;
    w.answer = null;
    w.runId = null;
    // Before its first answer, the caller decides what became of the job; after it, the job is over as far as this waiter goes.
    if (answer) answer('gone');
    else if (runId !== null) this.o.onOver(runId);
  }
}
