// The UI's state: a vanilla zustand store (testable without React) fed by the API client and by
// typed `noun:verb` engine events. An event re-reads only what it touches (one routine, one
// job), debounced; lists are re-read only when many items changed at once or the data is stale.
import { createStore, type StoreApi } from 'zustand/vanilla';
import type {
  Args,
  Channel,
  DaemonStatus,
  EngineEvent,
  Finding,
  JobInput,
  JobRow,
  PassReport,
  Result,
  Ret,
  RoutineDetail,
  RoutineSummary,
  Schedule,
  WorkerRow,
} from '../../../contract/calls.js';
import type { ApiClient, ConnectionState } from '../api/client.js';
import { emptyInvalidation, invalidate, isEmpty, type Invalidation } from './events.js';

export type Load = 'idle' | 'loading' | 'ready' | 'error';
export type Resource = 'routines' | 'runs' | 'jobs' | 'workers' | 'health' | `routine:${string}`;
export type RoutineOp = 'run' | 'restart' | 'stop' | 'pause' | 'resume' | 'clear';
export type TodayRun = Ret<'runs.list'>[number];

export interface ActionState {
  op: RoutineOp | 'cancel' | 'forget';
  phase: 'busy' | 'done' | 'error';
  message: string;
  /** The run an action started: its progress shows next to the result. */
  runId: string | null;
  at: number;
}

export interface TendState {
  connection: ConnectionState;
  where: string;
  routines: RoutineSummary[];
  routineIndex: ReadonlyMap<string, number>;
  routinesLoad: Load;
  schedules: Schedule[];
  details: Readonly<Record<string, RoutineDetail>>;
  detailErrors: Readonly<Record<string, string>>;
  runs: TodayRun[];
  runsLoad: Load;
  jobs: JobRow[];
  jobsLoad: Load;
  workers: WorkerRow[];
  workersLoad: Load;
  status: DaemonStatus | null;
  findings: Finding[];
  healthLoad: Load;
  /** Newest first, the last 100 pushed events. */
  recent: EngineEvent[];
  lastPass: (PassReport & { receivedAt: number }) | null;
  /** Keyed by routine id, or `job:ID`. */
  actions: Readonly<Record<string, ActionState>>;
  errors: Partial<Record<'routines' | 'runs' | 'jobs' | 'workers' | 'health', string>>;
}

export interface TendActions {
  loadRoutines(): Promise<void>;
  loadRoutine(id: string): Promise<void>;
  loadRuns(): Promise<void>;
  loadJobs(): Promise<void>;
  loadWorkers(): Promise<void>;
  loadHealth(): Promise<void>;
  /** Declare interest: loads when missing or stale, keeps it fresh while watched. */
  watch(r: Resource): () => void;
  act(id: string, op: RoutineOp): Promise<boolean>;
  cancelJob(id: number): Promise<boolean>;
  forgetWorker(computer: string): Promise<boolean>;
  postJob(input: JobInput): Promise<Result<JobRow>>;
  /** Feed one engine event (from the push stream or the catch-up). */
  apply(e: EngineEvent): void;
  pass(p: PassReport): void;
  dispose(): void;
}

export type TendStore = StoreApi<TendState & TendActions>;

export interface StoreOptions {
  debounceMs?: number;
  /** Re-read the whole routine list at most this often while it is watched (heartbeat ages). */
  reconcileMs?: number;
  now?: () => number;
  /** Do not subscribe to the client's pushes (tests drive `apply`). */
  passive?: boolean;
}

type Client = Pick<ApiClient, 'call' | 'on' | 'onConnection' | 'where'> & Partial<Pick<ApiClient, 'describe'>>;

const OP_CHANNEL = { run: 'routines.run', restart: 'routines.restart', stop: 'routines.stop', pause: 'routines.pause', resume: 'routines.resume', clear: 'routines.clear' } as const;
const OP_BUSY: Record<RoutineOp, string> = { run: 'Starting…', restart: 'Restarting…', stop: 'Stopping…', pause: 'Pausing…', resume: 'Resuming…', clear: 'Clearing…' };
const MANY = 40;

export function indexOf(list: { id: string }[]): Map<string, number> {
  return new Map(list.map((r, i) => [r.id, i]));
}

/** The summary part of a detail (what the list holds). */
export function summaryOf(d: RoutineDetail): RoutineSummary {
  return { id: d.id, name: d.name, schedule: d.schedule, computer: d.computer, kind: d.kind, external: d.external, observeOnly: d.observeOnly, trigger: d.trigger, nextRun: d.nextRun, retry: d.retry, today: d.today, lastRun: d.lastRun, dependencies: d.dependencies };
}

export function createTendStore(client: Client, o: StoreOptions = {}): TendStore {
  const now = o.now ?? Date.now;
  const debounceMs = o.debounceMs ?? 120;
  const watchers = new Map<Resource, number>();
  const stale = new Set<Resource>();
  let pending: Invalidation = emptyInvalidation();
  let flushTimer: ReturnType<typeof setTimeout> | null = null;
  const throttled = new Map<string, { last: number; timer: ReturnType<typeof setTimeout> | null }>();
  const unsubs: (() => void)[] = [];
  let lastReconcile = now();
  const seen = new Set<number>();
  let disposed = false;

  const watched = (r: Resource) => (watchers.get(r) ?? 0) > 0;
  const call = <C extends Channel>(c: C, a: Args<C>): Promise<Result<Ret<C>>> => client.call(c, a);

  /** At most once per `ms`, trailing call guaranteed. */
  function throttle(key: string, ms: number, fn: () => void): void {
    const t = throttled.get(key) ?? { last: 0, timer: null };
    throttled.set(key, t);
    if (t.timer) return;
    const wait = Math.max(0, t.last + ms - now());
    t.timer = setTimeout(() => {
      t.timer = null;
      t.last = now();
      if (!disposed) fn();
    }, wait);
  }

  const store = createStore<TendState & TendActions>()((set, get) => {
    const putDetail = (d: RoutineDetail) => {
      const s = get();
      const details = { ...s.details, [d.id]: d };
      const { [d.id]: _gone, ...detailErrors } = s.detailErrors;
      const i = s.routineIndex.get(d.id);
      if (i !== undefined) {
        const routines = s.routines.slice();
        routines[i] = summaryOf(d);
        set({ details, detailErrors, routines });
      } else if (s.routinesLoad === 'ready') {
        const routines = [...s.routines, summaryOf(d)];
        set({ details, detailErrors, routines, routineIndex: indexOf(routines) });
      } else set({ details, detailErrors });
    };
    const forget = (id: string) => {
      const s = get();
      const { [id]: _d, ...details } = s.details;
      if (!s.routineIndex.has(id)) return set({ details });
      const routines = s.routines.filter((r) => r.id !== id);
      set({ details, routines, routineIndex: indexOf(routines) });
    };
    const failLoad = (key: keyof TendState['errors'], message: string) => set({ errors: { ...get().errors, [key]: message } });
    const okLoad = (key: keyof TendState['errors']) => {
      if (get().errors[key] === undefined) return;
      const { [key]: _e, ...errors } = get().errors;
      set({ errors });
    };
    const setAction = (key: string, a: Omit<ActionState, 'at'>) => set({ actions: { ...get().actions, [key]: { ...a, at: now() } } });

    return {
      connection: 'connecting',
      where: client.where,
      routines: [],
      routineIndex: new Map(),
      routinesLoad: 'idle',
      schedules: [],
      details: {},
      detailErrors: {},
      runs: [],
      runsLoad: 'idle',
      jobs: [],
      jobsLoad: 'idle',
      workers: [],
      workersLoad: 'idle',
      status: null,
      findings: [],
      healthLoad: 'idle',
      recent: [],
      lastPass: null,
      actions: {},
      errors: {},

      async loadRoutines() {
        stale.delete('routines');
        if (get().routinesLoad !== 'ready') set({ routinesLoad: 'loading' });
        const [list, schedules] = await Promise.all([call('routines.list', {}), call('schedules.list', {})]);
        lastReconcile = now();
        if (!list.ok) {
          failLoad('routines', list.error.message);
          if (get().routinesLoad !== 'ready') set({ routinesLoad: 'error' });
          return;
        }
        okLoad('routines');
        set({ routines: list.value, routineIndex: indexOf(list.value), routinesLoad: 'ready', ...(schedules.ok ? { schedules: schedules.value } : {}) });
      },
      async loadRoutine(id) {
        stale.delete(`routine:${id}`);
        const r = await call('routines.show', { id });
        if (r.ok) return putDetail(r.value);
        if (r.error.code === 'NOT_FOUND') forget(id);
        set({ detailErrors: { ...get().detailErrors, [id]: r.error.message } });
      },
      async loadRuns() {
        stale.delete('runs');
        if (get().runsLoad !== 'ready') set({ runsLoad: 'loading' });
        const r = await call('runs.list', {});
        if (!r.ok) {
          failLoad('runs', r.error.message);
          if (get().runsLoad !== 'ready') set({ runsLoad: 'error' });
          return;
        }
        okLoad('runs');
        set({ runs: r.value, runsLoad: 'ready' });
      },
      async loadJobs() {
        stale.delete('jobs');
        if (get().jobsLoad !== 'ready') set({ jobsLoad: 'loading' });
        const r = await call('jobs.list', { limit: 5000 });
        if (!r.ok) {
          failLoad('jobs', r.error.message);
          if (get().jobsLoad !== 'ready') set({ jobsLoad: 'error' });
          return;
        }
        okLoad('jobs');
        set({ jobs: r.value, jobsLoad: 'ready' });
      },
      async loadWorkers() {
        stale.delete('workers');
        if (get().workersLoad !== 'ready') set({ workersLoad: 'loading' });
        const r = await call('workers.list', {});
        if (!r.ok) {
          failLoad('workers', r.error.message);
          if (get().workersLoad !== 'ready') set({ workersLoad: 'error' });
          return;
        }
        okLoad('workers');
        set({ workers: r.value, workersLoad: 'ready' });
      },
      async loadHealth() {
        stale.delete('health');
        if (get().healthLoad !== 'ready') set({ healthLoad: 'loading' });
        const [status, findings, recent] = await Promise.all([
          call('daemon.status', {}),
          call('daemon.doctor', {}),
          get().recent.length ? Promise.resolve(null) : call('events.recent', { limit: 100 }),
        ]);
        if (!status.ok || !findings.ok) {
          failLoad('health', (!status.ok ? status.error.message : !findings.ok ? findings.error.message : '') || 'unavailable');
          if (get().healthLoad !== 'ready') set({ healthLoad: 'error' });
          return;
        }
        okLoad('health');
        set({ status: status.value, findings: findings.value, healthLoad: 'ready', ...(recent?.ok ? { recent: recent.value } : {}) });
      },

      watch(r) {
        watchers.set(r, (watchers.get(r) ?? 0) + 1);
        const s = get();
        const load = () => {
          if (r === 'routines') return s.routinesLoad === 'idle' || s.routinesLoad === 'error' || stale.has(r) ? s.loadRoutines() : undefined;
          if (r === 'runs') return s.runsLoad === 'idle' || s.runsLoad === 'error' || stale.has(r) ? s.loadRuns() : undefined;
          if (r === 'jobs') return s.jobsLoad === 'idle' || s.jobsLoad === 'error' || stale.has(r) ? s.loadJobs() : undefined;
          if (r === 'workers') return s.workersLoad === 'idle' || s.workersLoad === 'error' || stale.has(r) ? s.loadWorkers() : undefined;
          if (r === 'health') return s.loadHealth();
          const id = r.slice('routine:'.length);
          return s.loadRoutine(id);
        };
        void load();
        return () => watchers.set(r, Math.max(0, (watchers.get(r) ?? 1) - 1));
      },

      async act(id, op) {
        setAction(id, { op, phase: 'busy', message: OP_BUSY[op], runId: null });
        const r = await call(OP_CHANNEL[op], { id });
        if (!r.ok) {
          setAction(id, { op, phase: 'error', message: r.error.message, runId: null });
          return false;
        }
        let message = 'Done';
        let runId: string | null = null;
        const v = r.value as Ret<(typeof OP_CHANNEL)[RoutineOp]>;
        if (op === 'run' && 'id' in v && 'status' in v) {
          runId = v.id;
          message = `Queued run ${v.id}`;
        } else if (op === 'restart' && 'started' in v) {
          runId = v.started.id;
          message = v.stopped.length ? `Stopped ${v.stopped.length}, started ${v.started.id}` : `Started ${v.started.id}`;
        } else if (op === 'stop' && Array.isArray(v)) {
          message = v.length ? `Stopped ${v.length} run${v.length > 1 ? 's' : ''}` : 'Nothing was running';
        } else if (op === 'pause') message = 'Paused';
        else if (op === 'resume') message = 'Resumed';
        else if (op === 'clear') message = 'Trigger cleared';
        setAction(id, { op, phase: 'done', message, runId });
        // Our own change: re-read it now (some ops write events no push stream carries).
        await get().loadRoutine(id);
        if (get().runsLoad === 'ready') throttle('runs', 500, () => void get().loadRuns());
        return true;
      },
      async cancelJob(id) {
        const key = `job:${id}`;
        setAction(key, { op: 'cancel', phase: 'busy', message: 'Cancelling…', runId: null });
        const r = await call('jobs.cancel', { id });
        if (!r.ok) {
          setAction(key, { op: 'cancel', phase: 'error', message: r.error.message, runId: null });
          return false;
        }
        setAction(key, { op: 'cancel', phase: 'done', message: `Job ${id} ${r.value.status}`, runId: null });
        upsertJob(r.value);
        return true;
      },
      async forgetWorker(computer) {
        const key = `worker:${computer}`;
        setAction(key, { op: 'forget', phase: 'busy', message: 'Forgetting…', runId: null });
        const r = await call('workers.forget', { computer });
        if (!r.ok) {
          setAction(key, { op: 'forget', phase: 'error', message: r.error.message, runId: null });
          return false;
        }
        const v = r.value;
        setAction(key, { op: 'forget', phase: 'done', message: `Forgot ${computer}: ${v.runs} run(s) ended unknown, ${v.failedJobs} job(s) failed, ${v.requeuedJobs} back in the queue`, runId: null });
        set({ workers: get().workers.filter((w) => w.computer !== computer) });
        return true;
      },
      async postJob(input) {
        const r = await call('jobs.post', input);
        if (r.ok) upsertJob(r.value);
        return r;
      },

      apply(e) {
        // Applied already (a replay after a reconnect).
        if (seen.has(e.id)) return;
        seen.add(e.id);
        if (seen.size > 5000) for (const id of [...seen].slice(0, 2500)) seen.delete(id);
        set({ recent: [e, ...get().recent].slice(0, 100) });
        pending = invalidate(pending, e);
        if (!flushTimer) flushTimer = setTimeout(flush, debounceMs);
      },
      pass(p) {
        set({ lastPass: { ...p, receivedAt: now() } });
        const t = now();
        if (watched('health')) throttle('health', 2000, () => void get().loadHealth());
        if (watched('routines') && t - lastReconcile >= (o.reconcileMs ?? 30_000)) {
          lastReconcile = t;
          void get().loadRoutines();
        }
      },
      dispose() {
        disposed = true;
        if (flushTimer) clearTimeout(flushTimer);
        for (const t of throttled.values()) if (t.timer) clearTimeout(t.timer);
        for (const u of unsubs) u();
      },
    };
  });

  function upsertJob(job: JobRow): void {
    const s = store.getState();
    const i = s.jobs.findIndex((j) => j.id === job.id);
    const jobs = i >= 0 ? s.jobs.map((j, k) => (k === i ? job : j)) : [job, ...s.jobs];
    store.setState({ jobs });
  }

  async function flush(): Promise<void> {
    flushTimer = null;
    const inv = pending;
    pending = emptyInvalidation();
    if (isEmpty(inv) || disposed) return;
    const s = store.getState();
    for (const id of inv.removed) if (s.details[id] || s.routineIndex.has(id)) forgetRoutine(id);
    const listReady = s.routinesLoad === 'ready';
    if (inv.routineList || inv.routines.size > MANY) {
      if (watched('routines')) void s.loadRoutines();
      else stale.add('routines');
      for (const id of inv.routines) if (watched(`routine:${id}`)) void s.loadRoutine(id);
    } else {
      for (const id of inv.routines) {
        const wanted = watched(`routine:${id}`) || (listReady && watched('routines'));
        if (wanted) void s.loadRoutine(id);
        else {
          if (listReady) stale.add('routines');
          if (s.details[id]) stale.add(`routine:${id}`);
        }
      }
    }
    if (inv.runs) {
      if (watched('runs')) throttle('runs', 1000, () => void store.getState().loadRuns());
      else if (s.runsLoad === 'ready') stale.add('runs');
    }
    if (inv.jobs.size) {
      if (!watched('jobs')) {
        if (s.jobsLoad === 'ready') stale.add('jobs');
      } else if (inv.jobs.size > MANY) void s.loadJobs();
      else
        for (const id of inv.jobs) {
          void client.call('jobs.show', { id }).then((r) => (r.ok ? upsertJob(r.value) : undefined));
        }
    }
    if (inv.workers) {
      if (watched('workers')) throttle('workers', 2000, () => void store.getState().loadWorkers());
      else if (s.workersLoad === 'ready') stale.add('workers');
    }
    if (inv.health && watched('health')) throttle('health', 1000, () => void store.getState().loadHealth());
  }

  function forgetRoutine(id: string): void {
    const s = store.getState();
    const { [id]: _d, ...details } = s.details;
    const routines = s.routines.filter((r) => r.id !== id);
    store.setState({ details, routines, routineIndex: indexOf(routines) });
  }

  if (!o.passive) {
    void client.describe?.().then((where) => store.setState({ where }));
    unsubs.push(client.on('event', (e) => store.getState().apply(e)));
    unsubs.push(client.on('pass', (p) => store.getState().pass(p)));
    unsubs.push(
      client.onConnection((c) => {
        const was = store.getState().connection;
        store.setState({ connection: c });
        // Back after a gap, or let in with a corrected token: whatever is watched may have moved.
        if (c === 'live' && (was === 'offline' || was === 'unauthorized')) {
          for (const [r, n] of watchers) {
            if (n === 0) continue;
            stale.add(r);
            reload(r);
          }
        }
      }),
    );
  }

  function reload(r: Resource): void {
    const s = store.getState();
    if (r === 'routines') void s.loadRoutines();
    else if (r === 'runs') void s.loadRuns();
    else if (r === 'jobs') void s.loadJobs();
    else if (r === 'workers') void s.loadWorkers();
    else if (r === 'health') void s.loadHealth();
    else void s.loadRoutine(r.slice('routine:'.length));
  }

  return store;
}
