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
import { createLocalBackend, type LocalBackend } from '../local/local-backend.js';
import { ApiClient } from './client.js';

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

/** Wait `ms`, or until kicked, or until the signal aborts; leaves no listener behind. */
function pause(ms: number, signal: AbortSignal, onKick?: (kick: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    onKick?.(done);
  });
}

export class WorkerAgent {
  readonly store: Store;
  readonly local: LocalBackend;
  private readonly api: ApiClient;
  private readonly stop = new AbortController();
  private kickReport: (() => void) | null = null;
  private kickJobs: (() => void) | null = null;
  /** Last state reported per job, so running jobs are re-reported only when something changed. */
  private sent = new Map<string, string>();
  online = false;

  constructor(private readonly o: AgentOptions) {
    this.store = Store.open(join(o.dataDir, 'tend.db'));
    this.local = createLocalBackend({ dataDir: o.dataDir, tendVersion: o.version, killGraceMs: o.killGraceMs, onExit: () => this.kick() });
    this.api = new ApiClient(o.server, o.token);
  }

  private kick(): void {
    this.kickReport?.();
    this.kickJobs?.();
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

  /** Retry with backoff while the server is away; running jobs are untouched. */
  private async guarded(what: string, fn: () => Promise<void>): Promise<void> {
    let backoff = 500;
    while (!this.stop.signal.aborted) {
      try {
        await fn();
        if (!this.online) this.o.log('connected');
        this.online = true;
        backoff = 500;
      } catch (err) {
        if (this.stop.signal.aborted) return;
        if (this.online) this.o.log(`${what}: ${errorMessage(err)}; retrying`);
        this.online = false;
        await pause(backoff, this.stop.signal);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  private info() {
    return { version: this.o.version, slots: this.o.batchSlots, running: this.runningCount() };
  }

  private commandLoop(): Promise<void> {
    return this.guarded('commands', async () => {
      const i = this.info();
      const q = `?wait=${this.o.waitMs ?? 25_000}&version=${encodeURIComponent(i.version)}&slots=${i.slots}&running=${i.running}`;
      const { commands } = await this.api.call<{ commands: Command[] }>('GET', `/api/worker/commands${q}`, undefined, this.stop.signal);
      for (const c of commands) await this.handle(c);
    });
  }

  private jobLoop(): Promise<void> {
    return this.guarded('jobs', async () => {
      const free = this.o.batchSlots - this.runningCount('job');
      if (free <= 0) {
        await pause(5000, this.stop.signal, (k) => (this.kickJobs = k));
        return;
      }
      const { jobs } = await this.api.call<{ jobs: { id: number; spec: JobSpec }[] }>(
        'POST',
        '/api/worker/jobs/claim',
        { slots: free, wait: this.o.waitMs ?? 25_000, version: this.o.version },
        this.stop.signal,
      );
      for (const j of jobs) await this.launch('job', String(j.id), j.spec);
    });
  }

  private reportLoop(): Promise<void> {
    return this.guarded('reports', async () => {
      await this.reportAll();
      await pause(1000, this.stop.signal, (k) => (this.kickReport = k));
    });
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
    if (this.store.ledger.get(kind, refId)) return; // already ours
    const runDir = join(this.o.dataDir, 'runs', utcDay(Date.now()), spec.runId);
    const local: JobSpec = { ...spec, runDir };
    this.store.ledger.record(kind, refId, 'local', { runDir, pending: true }, Date.now());
    let handle: Handle;
    try {
      handle = await this.local.submit(local);
    } catch (err) {
      this.store.ledger.clear(kind, refId);
      const reason = errorMessage(err);
      this.o.log(`${kind} ${refId} refused: ${reason}`);
      await this.send([{ kind, id: refId, state: 'refused', reason, endedAt: Date.now() }]);
      return;
    }
    this.store.ledger.setHandle(kind, refId, handle);
    this.kick();
  }

  /** Poll every job this worker holds; report what changed; forget what the server accepted. */
  async reportAll(): Promise<void> {
    const entries = this.store.ledger.all();
    if (entries.length === 0) return;
    const reports: Report[] = [];
    const done: typeof entries = [];
    for (const e of entries) {
      let handle = e.handle;
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
    await this.send(reports);
    for (const r of reports) this.sent.set(`${r.kind}:${r.id}`, JSON.stringify(r));
    for (const e of done) {
      this.store.ledger.clear(e.kind, e.refId);
      this.sent.delete(`${e.kind}:${e.refId}`);
    }
    if (done.length) this.kickJobs?.();
  }

  private async send(reports: Report[]): Promise<void> {
    const i = this.info();
    await this.api.call('POST', '/api/worker/reports', { reports, version: i.version, running: i.running }, this.stop.signal);
  }
}
