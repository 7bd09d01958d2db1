// A scriptable in-memory Backend for scheduler tests. It records every call in order, keeps JSON-safe
// handles (`{id: runId}`), and lets a test decide what each job does: run, heartbeat, finish with an
// exit code or a signal, vanish. Health and every call can be made to fail.
//
// Like the real local backend (whose job directory is keyed by run id), `submit` is idempotent per
// `spec.runId`: a resubmitted run id returns the existing handle and launches nothing.
import type { Backend, Handle, Health, JobSpec, LogStream, Manifest, Outcome, PollState } from '../../main/engine/backend.js';
import type { Clock } from '../../main/engine/clock.js';

export type Call =
  | { op: 'health' }
  | { op: 'submit'; id: string }
  | { op: 'poll'; ids: string[] }
  | { op: 'fetch'; id: string }
  | { op: 'cancel'; id: string; graceMs: number }
  | { op: 'release'; id: string };

export type Op = Call['op'];

export interface TestJob {
  id: string;
  spec: JobSpec;
  /** How many times this run id was launched (never more than 1 if submit is idempotent). */
  launches: number;
  state: 'queued' | 'running' | 'done' | 'lost';
  startedAt: number | null;
  heartbeatAt: number | null;
  outcome: Outcome | null;
  lostReason: string | null;
}

/** What `cancel` does to a job: end it by signal (default), or leave it running (ignores TERM). */
export type CancelBehaviour = 'kill' | 'ignore';

export interface TestBackendOptions {
  /** Timestamps for startedAt / endedAt; Date.now() otherwise. */
  clock?: Clock;
  /** State a newly launched job starts in (default `running`); `done` has exited 0 at once. */
  startAs?: 'queued' | 'running' | 'done';
  /**
   * Record every call and a copy of each spec (default true). The benchmarks turn it off so that
   * the double adds nothing measurable to the pass they time.
   */
  record?: boolean;
}

export class TestBackend implements Backend {
  readonly calls: Call[] = [];
  readonly jobs = new Map<string, TestJob>();
  private healthState: Health = { ok: true, reason: null };
  private failing = new Map<Op, Error>();
  /** `hang`: launch, then never resolve — the caller dies between launching and recording. */
  submitMode: 'normal' | 'hang' = 'normal';
  /** While set, a submit launches at once but answers only when it resolves (a launch in flight). */
  submitGate: Promise<void> | null = null;
  private submitWaiters: ((spec: JobSpec) => void)[] = [];
  cancelBehaviour: CancelBehaviour = 'kill';
  private readonly clock: Clock | undefined;
  private readonly startAs: 'queued' | 'running' | 'done';
  private readonly record: boolean;

  constructor(
    readonly name = 'local',
    opts: TestBackendOptions = {},
  ) {
    this.clock = opts.clock;
    this.startAs = opts.startAs ?? 'running';
    this.record = opts.record ?? true;
  }

  private now(): number {
    return this.clock ? this.clock.now() : Date.now();
  }

  // ---- scripting ---------------------------------------------------------------------------

  setHealth(ok: boolean, reason: string | null = ok ? null : 'unhealthy'): this {
    this.healthState = { ok, reason };
    return this;
  }

  /** Make every call of `op` reject with `err` until `succeed(op)`. */
  fail(op: Op, err: Error | string = `${op} failed`): this {
    this.failing.set(op, typeof err === 'string' ? new Error(err) : err);
    return this;
  }

  succeed(op?: Op): this {
    if (op) this.failing.delete(op);
    else this.failing.clear();
    return this;
  }

  job(id: string): TestJob {
    const j = this.jobs.get(id);
    if (!j) throw new Error(`test backend: no job ${id} (launched: ${[...this.jobs.keys()].join(', ') || 'none'})`);
    return j;
  }

  /** Mark a job running (optionally with a start time and a heartbeat). */
  markRunning(id: string, o: { startedAt?: number; heartbeatAt?: number | null } = {}): this {
    const j = this.job(id);
    j.state = 'running';
    j.startedAt = o.startedAt ?? j.startedAt ?? this.now();
    if (o.heartbeatAt !== undefined) j.heartbeatAt = o.heartbeatAt;
    return this;
  }

  heartbeat(id: string, at = this.now()): this {
    this.job(id).heartbeatAt = at;
    return this;
  }

  /** Finish a job: exit code (default 0), or a signal, or a reason the backend records. */
  finish(id: string, o: { exitCode?: number | null; signal?: string | null; reason?: string | null; endedAt?: number } = {}): this {
    const j = this.job(id);
    j.state = 'done';
    const signal = o.signal ?? null;
    j.outcome = {
      exitCode: o.exitCode !== undefined ? o.exitCode : signal ? null : 0,
      signal,
      reason: o.reason ?? null,
      startedAt: j.startedAt,
      endedAt: o.endedAt ?? this.now(),
    };
    return this;
  }

  /** The backend loses all trace of a job. */
  lose(id: string, reason = 'no trace of the job'): this {
    const j = this.job(id);
    j.state = 'lost';
    j.lostReason = reason;
    return this;
  }

  // ---- inspection --------------------------------------------------------------------------

  ops(): Op[] {
    return this.calls.map((c) => c.op);
  }

  count(op: Op): number {
    return this.calls.filter((c) => c.op === op).length;
  }

  /** Run ids in the order they were submitted (including idempotent resubmissions). */
  submitted(): string[] {
    return this.calls.flatMap((c) => (c.op === 'submit' ? [c.id] : []));
  }

  cancelled(): string[] {
    return this.calls.flatMap((c) => (c.op === 'cancel' ? [c.id] : []));
  }

  /** Total launches across all jobs: a run launched twice shows here. */
  launches(): number {
    let n = 0;
    for (const j of this.jobs.values()) n += j.launches;
    return n;
  }

  /** Jobs launched and not finished. */
  live(): string[] {
    return [...this.jobs.values()].filter((j) => j.state === 'queued' || j.state === 'running').map((j) => j.id);
  }

  /** Resolves with the spec of the next launch (for a pass that is left hanging in submit). */
  nextLaunch(): Promise<JobSpec> {
    return new Promise((resolve) => this.submitWaiters.push(resolve));
  }

  clearCalls(): void {
    this.calls.length = 0;
  }

  // ---- Backend -----------------------------------------------------------------------------

  private note(call: Call): void {
    if (this.record) this.calls.push(call);
  }

  private check(op: Op): void {
    const err = this.failing.get(op);
    if (err) throw err;
  }

  async health(): Promise<Health> {
    this.note({ op: 'health' });
    this.check('health');
    return { ...this.healthState };
  }

  async submit(spec: JobSpec): Promise<Handle> {
    this.note({ op: 'submit', id: spec.runId });
    this.check('submit');
    const existing = this.jobs.get(spec.runId);
    if (existing) return { id: spec.runId }; // its "job directory" exists: nothing launched again
    const now = this.now();
    this.jobs.set(spec.runId, {
      id: spec.runId,
      spec: this.record ? structuredClone(spec) : spec,
      launches: 1,
      state: this.startAs,
      startedAt: this.startAs === 'queued' ? null : now,
      heartbeatAt: null,
      outcome: this.startAs === 'done' ? { exitCode: 0, signal: null, reason: null, startedAt: now, endedAt: now } : null,
      lostReason: null,
    });
    for (const w of this.submitWaiters.splice(0)) w(spec);
    if (this.submitMode === 'hang') return new Promise<Handle>(() => undefined);
    if (this.submitGate) await this.submitGate;
    return { id: spec.runId };
  }

  async poll(handles: Handle[]): Promise<PollState[]> {
    const ids = handles.map(idOf);
    this.note({ op: 'poll', ids });
    this.check('poll');
    return ids.map((id): PollState => {
      const j = this.jobs.get(id);
      if (!j) return { state: 'lost', reason: `test backend never launched ${id}` };
      switch (j.state) {
        case 'queued':
          return { state: 'queued' };
        case 'running':
          return { state: 'running', startedAt: j.startedAt, heartbeatAt: j.heartbeatAt };
        case 'done':
          return { state: 'done' };
        case 'lost':
          return { state: 'lost', reason: j.lostReason ?? 'lost' };
      }
    });
  }

  async fetch(handle: Handle): Promise<Outcome> {
    const id = idOf(handle);
    this.note({ op: 'fetch', id });
    this.check('fetch');
    const j = this.jobs.get(id);
    if (!j || j.state !== 'done' || !j.outcome) throw new Error(`test backend: ${id} has no result`);
    return { ...j.outcome };
  }

  async cancel(handle: Handle, graceMs: number): Promise<void> {
    const id = idOf(handle);
    this.note({ op: 'cancel', id, graceMs });
    this.check('cancel');
    const j = this.jobs.get(id);
    if (!j || j.state === 'done' || j.state === 'lost') return;
    if (this.cancelBehaviour === 'kill') this.finish(id, { signal: 'SIGTERM' });
  }

  async release(handle: Handle): Promise<void> {
    this.note({ op: 'release', id: idOf(handle) });
  }

  /** What a job wrote, by `<runDir> <stream>` (scripted with `write`). */
  readonly output = new Map<string, string>();

  write(runDir: string, stream: LogStream, text: string): this {
    const key = `${runDir} ${stream}`;
    this.output.set(key, (this.output.get(key) ?? '') + text);
    return this;
  }

  async tailLog(runDir: string, stream: LogStream, maxBytes: number): Promise<string> {
    const text = this.output.get(`${runDir} ${stream}`) ?? '';
    const bytes = Buffer.from(text);
    return bytes.subarray(Math.max(0, bytes.length - maxBytes)).toString();
  }

  /** Manifests by run dir (scripted by setting them). */
  readonly manifests = new Map<string, Manifest>();

  readManifest(runDir: string): Manifest | null {
    return this.manifests.get(runDir) ?? null;
  }

  async *followLog(runDir: string, stream: LogStream): AsyncGenerator<string> {
    const text = this.output.get(`${runDir} ${stream}`);
    if (text) yield text;
  }
}

function idOf(handle: Handle): string {
  const id = handle.id;
  if (typeof id !== 'string') throw new Error(`test backend: not a test handle: ${JSON.stringify(handle)}`);
  return id;
}
