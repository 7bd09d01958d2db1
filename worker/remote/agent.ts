// `tend worker`: one per host. Pulls the commands addressed to its computer (long poll), claims
// one-off batch jobs for its free slots, launches them with the local backend in job directories
// on this host, and reports back. Its own ledger (a Tend store in its data dir) is the record:
// a worker that loses the server keeps its jobs and reports them on reconnect; a restarted worker
// re-adopts its running jobs from their directories.
import { join } from 'node:path';
import type { Handle, JobSpec } from '../../main/engine/backend.js';
import { errorMessage } from '../../main/engine/errors.js';
import { utcDay } from '../../main/engine/ids.js';
import { Store } from '../../main/engine/store/store.js';
import { DEFAULT_KEEP_DAYS } from '../../main/engine/keep-days.js';
import { createLocalBackend, type LocalBackend } from '../local/local-backend.js';
import type { WaiterTools } from '../local/tools.js';
import { z } from 'zod';
import { ApiError } from '../../contract/api-error.js';
import type { Api } from '../../contract/api-client.js';
import { workerApi } from './client.js';
import { ClaimResult, Command, ReportsResult, WORKER_PATHS, type WorkerReport } from '../../contract/worker-protocol.js';
import { pruneRunDirs } from './prune.js';

const PRUNE_EVERY_MS = 10 * 60_000;
/** A token the server does not know is retried this many times (a daemon mid-restart), then the worker exits. */
const TOKEN_TRIES = 5;
const MAX_BACKOFF_MS = 30_000;

export interface AgentOptions {
  server: string;
  token: string;
  computer: string;
  batchSlots: number;
  dataDir: string;
  version: string;
  log: (line: string) => void;
  /** Long-poll length (ms). */
  waitMs?: number;
  /** Days its finished job directories are kept (TEND_KEEP_DAYS); null keeps them all. Default 30. */
  keepDays?: number | null;
  killGraceMs?: number;
  /** The waiter's shell and how it is spawned (TEND_JOB_SHELL, TEND_SPAWNER of `tend worker`). */
  tools?: WaiterTools;
}

/** The commands of an answer, each read on its own (see commandLoop). */
const CommandsAnswer = z.object({ commands: z.array(z.unknown()) });

/** A daemon's answer, read with the protocol's schema: one that does not fit is the daemon's fault, said as such. */
function answer<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  throw new ApiError('INTERNAL', `${what}: the daemon's answer does not fit the worker protocol (${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}): is it another version of Tend?`, issues);
}

function describeCommand(raw: unknown): string {
  const c = (typeof raw === 'object' && raw !== null ? raw : {}) as { id?: unknown; kind?: unknown };
  return `id ${String(c.id)}, kind ${String(c.kind)}`;
}

/** The server's "this token belongs to X, not Y", said with what to do about it. */
export function mismatch(message: string, computer: string): string {
  const owner = / belongs to (\S+?),? not /.exec(message)?.[1];
  const what = owner ? `this token belongs to ${owner}, not ${computer}` : message;
  const fix = owner ? `start the worker with --computer ${owner}, or issue a token for ${computer} on the daemon host (\`tend worker token ${computer}\`)` : `issue a token for ${computer} on the daemon host (\`tend worker token ${computer}\`)`;
  return `refused: ${what}. Stopping: ${fix}.`;
}

/**
 * A wake-up that is never lost: a kick while nobody waits is kept, and the next wait returns at
 * once. (A loop busy reporting when a job exits must not sleep a full interval before noticing.)
 */
export class Kick {
  private pending = false;
  private waiter: (() => void) | null = null;

  kick(): void {
    this.pending = true;
    this.waiter?.();
  }

  /** Wait `ms`, or until kicked (now or since the last wait), or until the signal aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiter = null;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waiter = done;
    });
  }
}

export class WorkerAgent {
  readonly store: Store;
  readonly local: LocalBackend;
  private readonly api: Api;
  private readonly stop = new AbortController();
  private readonly reportKick = new Kick();
  private readonly jobsKick = new Kick();
  /** Launches in progress: their ledger rows say `pending` and must not be taken for interrupted ones. */
  private readonly launching = new Set<string>();
  /** Last state reported per job, so running jobs are re-reported only when something changed. */
  private sent = new Map<string, string>();
  /** Backoff waits of the loops, cut short when the server answers again. */
  private readonly retries = new Set<Kick>();
  online = false;
  /** Why the worker stopped by itself (a token for another computer, or refused again and again); null otherwise. */
  fatal: string | null = null;
  private nextPruneAt = 0;
  private last = { line: '', at: 0 };

  constructor(private readonly o: AgentOptions) {
    this.store = Store.open(join(o.dataDir, 'tend.db'));
    this.local = createLocalBackend({ dataDir: o.dataDir, tendVersion: o.version, killGraceMs: o.killGraceMs, tools: o.tools, onExit: () => this.kick() });
    this.api = workerApi(o.server, o.token);
  }

  private kick(): void {
    this.reportKick.kick();
    this.jobsKick.kick();
  }

  runningCount(kind?: 'run' | 'job'): number {
    return this.store.ledger.all().filter((e) => !kind || e.kind === kind).length;
  }

  async run(): Promise<void> {
    this.o.log(`worker ${this.o.computer} → ${this.o.server} (batch slots ${this.o.batchSlots}, data dir ${this.o.dataDir})`);
    const loops = [this.commandLoop(), this.reportLoop()];
    if (this.o.batchSlots > 0) loops.push(this.jobLoop());
    await Promise.all(loops);
    this.store.close();
  }

  shutdown(): void {
    this.stop.abort();
    this.kick();
  }

  /**
   * Retry with backoff while the server is away; running jobs are untouched. Each loop backs off
   * on its own, but the first call that gets through wakes them all: on reconnect everything that
   * finished meanwhile is reported at once, not after the slowest loop's backoff.
   */
  private async guarded(what: string, fn: () => Promise<void>): Promise<void> {
    let backoff = 500;
    let refusals = 0;
    const retry = new Kick();
    this.retries.add(retry);
    try {
      while (!this.stop.signal.aborted) {
        try {
          await fn();
          backoff = 500;
          refusals = 0;
        } catch (err) {
          if (this.stop.signal.aborted) return;
          this.online = false;
          const next = `${Math.round(backoff / 100) / 10} s`;
          if (err instanceof ApiError && err.code === 'FORBIDDEN' && / belongs to /.test(err.message)) {
            return this.giveUp(mismatch(err.message, this.o.computer));
          }
          if (err instanceof ApiError && err.code === 'UNAUTHORIZED') {
            const why = `the server refused the token (${err.message}): it is wrong, was replaced, or the worker was forgotten; issue one on the daemon host with \`tend worker token ${this.o.computer}\``;
            if (++refusals >= TOKEN_TRIES) return this.giveUp(`${why}. Gave up after ${TOKEN_TRIES} tries.`);
            this.say(`${why} (try ${refusals} of ${TOKEN_TRIES}; next in ${next})`);
          } else {
            // Unreachable, or answering with an error: running jobs are untouched, retried for as long as it takes.
            this.say(`${what}: ${errorMessage(err)}; retrying in ${next} (running jobs keep running)`);
          }
          await retry.wait(backoff, this.stop.signal);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        }
      }
    } finally {
      this.retries.delete(retry);
    }
  }

  /** Log a line, unless the same one was just logged (the loops fail together when the server does). */
  private say(line: string): void {
    const now = Date.now();
    if (line === this.last.line && now - this.last.at < 5000) return;
    this.last = { line, at: now };
    this.o.log(line);
  }

  private giveUp(why: string): void {
    if (this.fatal === null) {
      this.fatal = why;
      this.o.log(why);
    }
    this.shutdown();
  }

  /** Every call to the server: "connected" is what the server answered, not what a loop assumed. */
  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const value = await this.api.request<unknown>(method, path, body, { signal: this.stop.signal, what: `${method} ${path.split('?')[0]}` });
    if (!this.online) {
      this.online = true;
      this.o.log('connected');
      for (const r of this.retries) r.kick();
    }
    return value;
  }

  private info() {
    return { version: this.o.version, slots: this.o.batchSlots, running: this.runningCount() };
  }

  private commandLoop(): Promise<void> {
    return this.guarded('commands', async () => {
      const i = this.info();
      const q = `?computer=${encodeURIComponent(this.o.computer)}&wait=${this.o.waitMs ?? 25_000}&version=${encodeURIComponent(i.version)}&slots=${i.slots}&running=${i.running}`;
      const got = answer(CommandsAnswer, await this.call('GET', `${WORKER_PATHS.commands}${q}`), 'GET commands');
      // One by one: fetched commands are gone from the daemon, so one this worker cannot read is
      // skipped (and said) rather than losing the others with it.
      for (const raw of got.commands) {
        const c = Command.safeParse(raw);
        if (c.success) await this.handle(c.data);
        else this.o.log(`skipped a command this worker cannot read (${describeCommand(raw)}): ${c.error.issues.map((i) => `${i.path.join('.') || '(command)'}: ${i.message}`).join('; ')}`);
      }
    });
  }

  private jobLoop(): Promise<void> {
    return this.guarded('jobs', async () => {
      const free = this.o.batchSlots - this.runningCount('job');
      if (free <= 0) {
        await this.jobsKick.wait(5000, this.stop.signal);
        return;
      }
      const raw = await this.call('POST', WORKER_PATHS.claim, {
        computer: this.o.computer,
        slots: free,
        wait: this.o.waitMs ?? 25_000,
        version: this.o.version,
      });
      const { jobs } = answer(ClaimResult, raw, 'POST claim');
      // Launched together, like the daemon's own submit phase.
      await Promise.all(jobs.map((j) => this.launch('job', String(j.id), j.spec)));
    });
  }

  private reportLoop(): Promise<void> {
    return this.guarded('reports', async () => {
      await this.reportAll();
      this.maybePrune();
      await this.reportKick.wait(1000, this.stop.signal);
    });
  }

  /** Old job directories of work this worker has reported: removed now and then (see prune.ts). */
  maybePrune(now = Date.now()): number {
    const keepDays = this.o.keepDays === undefined ? DEFAULT_KEEP_DAYS : this.o.keepDays;
    if (keepDays === null || now < this.nextPruneAt) return 0;
    this.nextPruneAt = now + PRUNE_EVERY_MS;
    const inFlight = new Set(this.store.ledger.all().flatMap((e) => (typeof e.handle['runDir'] === 'string' ? [e.handle['runDir']] : [])));
    try {
      const n = pruneRunDirs(this.o.dataDir, keepDays, now, inFlight);
      if (n > 0) this.o.log(`removed ${n} job director${n === 1 ? 'y' : 'ies'} older than ${keepDays} days`);
      return n;
    } catch (err) {
      this.o.log(`removing old job directories: ${errorMessage(err)}`);
      return 0;
    }
  }

  private async handle(c: Command): Promise<void> {
    if (c.kind === 'start') {
      await this.launch(c.payload.spec.kind, c.payload.spec.runId, c.payload.spec);
    } else {
      const key = c.payload.kind === 'job' ? c.payload.runId.replace(/^job-/, '') : c.payload.runId;
      const entry = this.store.ledger.get(c.payload.kind, key);
      if (entry) void this.local.cancel(entry.handle, c.payload.graceMs).finally(() => this.kick());
    }
  }

  /** Record, launch, then report. The job directory on this host is the durable record. */
  private async launch(kind: 'run' | 'job', refId: string, spec: JobSpec): Promise<void> {
    const key = `${kind}:${refId}`;
    if (this.launching.has(key) || this.store.ledger.get(kind, refId)) return; // already ours
    const runDir = join(this.o.dataDir, 'runs', utcDay(Date.now()), spec.runId);
    const local: JobSpec = { ...spec, runDir };
    this.launching.add(key);
    try {
      this.store.ledger.record(kind, refId, 'local', { runDir, pending: true }, Date.now());
      let handle: Handle;
      try {
        handle = await this.local.submit(local);
      } catch (err) {
        // Kept in the ledger until the server has heard it, like any other outcome.
        const reason = errorMessage(err);
        this.o.log(`${kind} ${refId} refused: ${reason}`);
        this.store.ledger.setHandle(kind, refId, { runDir, refused: reason, endedAt: Date.now() });
        return;
      }
      this.store.ledger.setHandle(kind, refId, handle);
    } finally {
      this.launching.delete(key);
    }
    this.kick();
  }

  /** Poll every job this worker holds; report what changed; forget what the server accepted. */
  async reportAll(): Promise<void> {
    const entries = this.store.ledger.all();
    if (entries.length === 0) return;
    const reports: WorkerReport[] = [];
    const done: typeof entries = [];
    for (const e of entries) {
      if (this.launching.has(`${e.kind}:${e.refId}`)) continue; // not launched yet: nothing to say
      let handle = e.handle;
      if (typeof handle.refused === 'string') {
        reports.push({ kind: e.kind, id: e.refId, state: 'refused', reason: handle.refused, endedAt: typeof handle.endedAt === 'number' ? handle.endedAt : Date.now() });
        done.push(e);
        continue;
      }
      if (handle.pending) {
        // Interrupted between the ledger write and the launch: the directory says whether it ran.
        const adopted = this.local.handleFromRunDir(String(handle.runDir));
        if (!adopted) {
          reports.push({ kind: e.kind, id: e.refId, state: 'refused', reason: 'the worker restarted before launching it', endedAt: Date.now() });
          done.push(e);
          continue;
        }
        this.store.ledger.setHandle(e.kind, e.refId, adopted);
        handle = adopted;
      }
      const [state] = await this.local.poll([handle]);
      if (state?.state === 'running') {
        const r: WorkerReport = { kind: e.kind, id: e.refId, state: 'running', runDir: String(handle.runDir), startedAt: state.startedAt ?? undefined, heartbeatAt: state.heartbeatAt ?? undefined, pid: typeof handle.pid === 'number' ? handle.pid : undefined };
        const sig = JSON.stringify(r);
        if (this.sent.get(`${e.kind}:${e.refId}`) !== sig) reports.push(r);
      } else if (state?.state === 'done' || state?.state === 'lost') {
        const out = state.state === 'done' ? await this.local.fetch(handle) : { exitCode: null, signal: null, reason: state.reason, startedAt: null, endedAt: Date.now() };
        reports.push({ kind: e.kind, id: e.refId, state: 'done', exitCode: out.exitCode, signal: out.signal, reason: out.reason, runDir: String(handle.runDir), startedAt: out.startedAt ?? undefined, endedAt: out.endedAt ?? Date.now() });
        done.push(e);
      }
    }
    if (reports.length === 0) return;
    await this.send(reports, this.runningCount() - done.length);
    for (const r of reports) this.sent.set(`${r.kind}:${r.id}`, JSON.stringify(r));
    for (const e of done) {
      this.store.ledger.clear(e.kind, e.refId);
      this.sent.delete(`${e.kind}:${e.refId}`);
    }
    if (done.length) this.jobsKick.kick();
  }

  /** `running`: what this worker holds once these reports are accepted. */
  private async send(reports: WorkerReport[], running: number): Promise<void> {
    // The server takes reasons up to 2000 characters; a longer one must not block every report.
    const fit = reports.map((r) => (r.reason && r.reason.length > 2000 ? { ...r, reason: `${r.reason.slice(0, 1997)}...` } : r));
    answer(ReportsResult, await this.call('POST', WORKER_PATHS.reports, { computer: this.o.computer, reports: fit, version: this.o.version, slots: this.o.batchSlots, running }), 'POST reports');
  }
}
