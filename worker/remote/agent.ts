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
import { ApiClient } from './client.js';
import { pruneRunDirs } from './prune.js';

const PRUNE_EVERY_MS = 10 * 60_000;

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
}

interface Command {
  id: number;
  kind: 'start' | 'cancel';
  payload: { spec?: JobSpec; runId?: string; kind?: 'run' | 'job'; graceMs?: number };
  expiresAt: number;
}

interface Report {
  kind: 'run' | 'job';
  id: string;
  state: 'running' | 'done' | 'refused';
  pid?: number;
  exitCode?: number | null;
  signal?: string | null;
  reason?: string | null;
  runDir?: string;
  startedAt?: number;
  endedAt?: number;
  heartbeatAt?: number;
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
  private readonly api: ApiClient;
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
  private nextPruneAt = 0;

  constructor(private readonly o: AgentOptions) {
    this.store = Store.open(join(o.dataDir, 'tend.db'));
    this.local = createLocalBackend({ dataDir: o.dataDir, tendVersion: o.version, killGraceMs: o.killGraceMs, onExit: () => this.kick() });
    this.api = new ApiClient(o.server, o.token);
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
    const retry = new Kick();
    this.retries.add(retry);
    try {
      while (!this.stop.signal.aborted) {
        try {
          await fn();
          backoff = 500;
        } catch (err) {
          if (this.stop.signal.aborted) return;
          if (this.online) this.o.log(`${what}: ${errorMessage(err)}; retrying`);
          this.online = false;
          await retry.wait(backoff, this.stop.signal);
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
    } finally {
      this.retries.delete(retry);
    }
  }

  /** Every call to the server: "connected" is what the server answered, not what a loop assumed. */
  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const value = await this.api.call<T>(method, path, body, this.stop.signal);
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
      const q = `?wait=${this.o.waitMs ?? 25_000}&version=${encodeURIComponent(i.version)}&slots=${i.slots}&running=${i.running}`;
      const { commands } = await this.call<{ commands: Command[] }>('GET', `/api/worker/commands${q}`);
      for (const c of commands) await this.handle(c);
    });
  }

  private jobLoop(): Promise<void> {
    return this.guarded('jobs', async () => {
      const free = this.o.batchSlots - this.runningCount('job');
      if (free <= 0) {
        await this.jobsKick.wait(5000, this.stop.signal);
        return;
      }
      const { jobs } = await this.call<{ jobs: { id: number; spec: JobSpec }[] }>('POST', '/api/worker/jobs/claim', {
        slots: free,
        wait: this.o.waitMs ?? 25_000,
        version: this.o.version,
      });
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
    // The server never hands out an expired command; this guards against a skewed clock only.
    if (c.kind === 'start' && c.payload.spec) {
      await this.launch(c.payload.spec.kind === 'job' ? 'job' : 'run', c.payload.spec.runId, c.payload.spec);
    } else if (c.kind === 'cancel' && c.payload.runId) {
      const key = c.payload.kind === 'job' ? c.payload.runId.replace(/^job-/, '') : c.payload.runId;
      const entry = this.store.ledger.get(c.payload.kind ?? 'run', key);
      if (entry) void this.local.cancel(entry.handle, c.payload.graceMs ?? this.o.killGraceMs ?? 10_000).finally(() => this.kick());
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
    const reports: Report[] = [];
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
        const r: Report = { kind: e.kind, id: e.refId, state: 'running', runDir: String(handle.runDir), startedAt: state.startedAt ?? undefined, heartbeatAt: state.heartbeatAt ?? undefined, pid: typeof handle.pid === 'number' ? handle.pid : undefined };
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
  private async send(reports: Report[], running: number): Promise<void> {
    // The server takes reasons up to 2000 characters; a longer one must not block every report.
    const fit = reports.map((r) => (r.reason && r.reason.length > 2000 ? { ...r, reason: `${r.reason.slice(0, 1997)}...` } : r));
    await this.call('POST', '/api/worker/reports', { reports: fit, version: this.o.version, slots: this.o.batchSlots, running });
  }
}
