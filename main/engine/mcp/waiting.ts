// "What is waiting, and why", from another process than the daemon. The daemon's own reasons live
// in its memory (scheduler.waitReasons()); here they are derived again from what the store and the
// data dir hold: the run rows (a DELAYED run keeps the reason it was late), dependency runs of the
// same cycle, the ledger (slots), schedule modes, workers' last contact, backend pauses logged in
// the events table since the daemon started, and whether a daemon owns the data dir at all.
import { ownerPid } from '../daemon/nudge.js';
import { readState } from '../daemon/state.js';
import { localComputer } from '../domain/computer.js';
import type { RoutineDef, RunRow } from '../domain/types.js';
import { workerOnline } from '../domain/online.js';
import { CRASH_LOOP, QUICK_DEATH_MS, silenced } from '../scheduler/check.js';
import { restartDelayMs } from '../scheduler/supervise.js';
import { DEFAULT_SETTINGS } from '../settings.js';
import type { Store } from '../store/store.js';

export type WaitCategory =
  | 'dependency'
  | 'time'
  | 'slot'
  | 'backend'
  | 'worker'
  | 'observe-only'
  | 'overlap'
  | 'daemon'
  | 'launching'
  | 'external'
  | 'paused'
  | 'stopped'
  | 'error'
  | 'due'
  | 'unknown';

export interface WaitItem {
  kind: 'run' | 'realtime' | 'job';
  routineId: string | null;
  runId: string | null;
  jobId: number | null;
  status: string;
  category: WaitCategory;
  reason: string;
  dueAt: string | null;
  /** A DELAYED run: the reason recorded when it became late. */
  delayedBecause?: string | null;
}

export interface Waiting {
  daemon: { running: boolean; pid: number | null; note: string | null };
  items: WaitItem[];
  /** Scheduled batch runs due in the next 24 hours. */
  upcoming: { routineId: string; at: string }[];
  total: number;
  truncated: boolean;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Backends the running daemon reported paused (and not resumed) since it started. */
export function pausedBackends(store: Store, since: number): Map<string, string> {
  const rows = store.db
    .prepare(`SELECT type, message FROM events WHERE at >= ? AND type IN ('backend:paused', 'backend:resumed') ORDER BY id DESC LIMIT 1000`)
    .all(since) as { type: string; message: string }[];
  const seen = new Set<string>();
  const paused = new Map<string, string>();
  for (const r of rows) {
    const m = /^backend (\S+) (?:paused: (.*?)(?:; nothing fails.*)?|healthy again.*)$/s.exec(r.message);
    if (!m || seen.has(m[1]!)) continue;
    seen.add(m[1]!);
    if (r.type === 'backend:paused') paused.set(m[1]!, m[2] ?? 'unhealthy');
  }
  return paused;
}

export interface WaitingOptions {
  limit?: number;
  /** This host's user@COMPUTER (routines of other computers go to the worker pool). */
  computer?: string;
  /** The daemon's bound on jobs in flight (Settings.maxParallel; default as the daemon's). */
  maxParallel?: number;
  /** The online rule's threshold (Settings.workerOfflineMs; default as the daemon's). */
  workerOfflineMs?: number;
}

export function whatIsWaiting(store: Store, dataDir: string, now: number, o: WaitingOptions = {}): Waiting {
  const limit = o.limit ?? 100;
  const pid = ownerPid(dataDir);
  const alive = pid !== null;
  const state = alive ? readState(dataDir) : null;
  const since = state?.startedAt ? Date.parse(state.startedAt) : now - 3_600_000;
  const paused = alive ? pausedBackends(store, since) : new Map<string, string>();
  const local = o.computer ?? localComputer();
  const defs = new Map(store.routines.allDefs().map((d) => [d.id, d]));
  const schedules = new Map(store.routines.schedules().map((s) => [s.name, s]));
  const workers = new Map(store.pool.workers().map((w) => [w.computer, w]));
  const ledger = store.ledger.all();
  const inLedger = new Set(ledger.filter((e) => e.kind === 'run').map((e) => e.refId));
  const maxParallel = o.maxParallel ?? DEFAULT_SETTINGS.maxParallel;
  const offlineMs = o.workerOfflineMs ?? DEFAULT_SETTINGS.workerOfflineMs;
  const active = store.runs.active();
  const busy = new Set(active.filter((r) => r.status === 'STARTING' || r.status === 'RUNNING').map((r) => r.routineId));
  const perSchedule = new Map<string, number>();
  for (const r of active) {
    if ((r.status === 'STARTING' || r.status === 'RUNNING') && inLedger.has(r.id)) {
      const s = defs.get(r.routineId)?.schedule;
      if (s) perSchedule.set(s, (perSchedule.get(s) ?? 0) + 1);
    }
  }
  const noDaemon = { category: 'daemon' as const, reason: 'no daemon owns the data dir: nothing starts until one does (`tend daemon ensure`)' };

  const workerOffline = (computer: string): string | null => {
    const w = workers.get(computer);
    if (!w || w.lastSeen === null) return `worker ${computer} has never connected (start \`tend worker\` there)`;
    if (!workerOnline(w.lastSeen, now, offlineMs)) return `worker ${computer} offline: last seen ${iso(w.lastSeen)}`;
    return null;
  };
  const backendBlock = (def: RoutineDef): { category: WaitCategory; reason: string } | null => {
    let name = def.backend;
    if (def.computer !== local) {
      const off = workerOffline(def.computer);
      if (off) return { category: 'worker', reason: off };
      name = `pool:${def.computer}`;
    }
    const p = paused.get(name);
    return p ? { category: 'backend', reason: `backend ${name} paused: ${p}` } : null;
  };
  const slotBlock = (def: RoutineDef): { category: WaitCategory; reason: string } | null => {
    if (ledger.length >= maxParallel) return { category: 'slot', reason: `no free slot: ${ledger.length} jobs in flight (max_parallel ${maxParallel})` };
    const max = schedules.get(def.schedule)?.maxParallel ?? null;
    if (max !== null && (perSchedule.get(def.schedule) ?? 0) >= max) return { category: 'slot', reason: `no free slot in schedule ${def.schedule} (max_parallel ${max})` };
    return null;
  };
  const realtimeDeps = (def: RoutineDef): string | null => {
    for (const dep of def.dependencies) {
      if (defs.get(dep)?.kind !== 'realtime') continue;
      const latest = store.runs.latest(dep);
      if (latest?.status !== 'RUNNING') return `waiting for ${dep} to be RUNNING (${latest?.status ?? 'never started'})`;
    }
    return null;
  };
  const ready = (def: RoutineDef) => backendBlock(def) ?? slotBlock(def) ?? (alive ? { category: 'due' as const, reason: 'due: the daemon starts it on its next pass' } : noDaemon);

  const items: WaitItem[] = [];
  const push = (run: RunRow | null, def: RoutineDef | null, w: { category: WaitCategory; reason: string }, extra: Partial<WaitItem> = {}) =>
    items.push({
      kind: run ? 'run' : 'realtime',
      routineId: run?.routineId ?? def?.id ?? null,
      runId: run?.id ?? null,
      jobId: null,
      status: run?.status ?? 'NOT RUNNING',
      dueAt: run ? iso(run.notBefore ?? run.scheduledAt) : null,
      ...w,
      ...extra,
    });

  for (const run of active) {
    if (run.status === 'RUNNING') continue;
    const def = defs.get(run.routineId) ?? null;
    const extra = run.status === 'DELAYED' ? { delayedBecause: run.reason } : {};
    if (!def) {
      push(run, null, { category: 'unknown', reason: 'its routine definition was removed' }, extra);
      continue;
    }
    if (run.status === 'STARTING') {
      const off = def.computer !== local ? workerOffline(def.computer) : null;
      if (off) push(run, def, { category: 'worker', reason: off });
      else if (!alive) push(run, def, noDaemon);
      else push(run, def, { category: 'launching', reason: def.computer !== local ? `sent to worker ${def.computer}; waiting for it to report the start` : 'submitted; waiting for the process to report running' });
      continue;
    }
    if (def.external) {
      push(run, def, { category: 'external', reason: 'external routine: Tend never starts it; it reports over the API' }, extra);
      continue;
    }
    if (schedules.get(def.schedule)?.mode === 'observe') {
      push(run, def, { category: 'observe-only', reason: `schedule ${def.schedule} is observe-only: status is tracked, nothing is started` }, extra);
      continue;
    }
    if (run.notBefore !== null && run.notBefore > now) {
      push(run, def, { category: 'time', reason: `retry at ${iso(run.notBefore)} (attempt ${run.attempt})` }, extra);
      continue;
    }
    if (run.scheduledAt > now) {
      push(run, def, { category: 'time', reason: `due at ${iso(run.scheduledAt)}` }, extra);
      continue;
    }
    if (def.overlap !== 'allow' && busy.has(def.id)) {
      push(run, def, { category: 'overlap', reason: `previous run still running (overlap ${def.overlap})` }, extra);
      continue;
    }
    let dep: string | null = null;
    if (run.kind === 'batch' && !run.manual) {
      for (const d of def.dependencies) {
        const latest = store.runs.latestInCycle(d, run.cycle);
        if (latest?.status !== 'COMPLETED') {
          dep = `waiting for ${d} (${latest ? latest.status : 'not run'} on ${run.cycle})`;
          break;
        }
      }
    } else if (run.kind === 'realtime') dep = realtimeDeps(def);
    push(run, def, dep ? { category: 'dependency', reason: dep } : ready(def), extra);
  }

  for (const def of defs.values()) {
    if (def.kind !== 'realtime' || def.external || busy.has(def.id) || active.some((r) => r.routineId === def.id)) continue;
    const t = store.routines.trigger(def.id);
    const latest = store.runs.latest(def.id);
    if (t && t.state !== 'scheduled') {
      push(null, def, { category: 'paused', reason: 'paused: it is not started until resumed' });
      continue;
    }
    if (latest?.status === 'STOPPED') {
      push(null, def, { category: 'stopped', reason: `stopped by hand (${latest.reason ?? 'stopped'}): start it with run_routine` });
      continue;
    }
    if (latest?.status === 'ERROR') {
      push(null, def, { category: 'error', reason: `not restarted: ${latest.reason ?? 'ERROR'}; restart it by hand once fixed` });
      continue;
    }
    if (schedules.get(def.schedule)?.mode === 'observe') {
      push(null, def, { category: 'observe-only', reason: `schedule ${def.schedule} is observe-only: nothing is started` });
      continue;
    }
    if (latest?.status === 'EXITED') {
      const readyAt = (latest.endedAt ?? now) + restartDelayMs(quickDeaths(store, def.id));
      if (readyAt > now) {
        push(null, def, { category: 'time', reason: `restart backoff until ${iso(readyAt)} after quick deaths (last: ${latest.reason ?? 'exited'})` });
        continue;
      }
    }
    const dep = realtimeDeps(def);
    push(null, def, dep ? { category: 'dependency', reason: dep } : ready(def));
  }

  for (const job of [...store.jobs.withStatus('WAITING', 1000), ...store.jobs.withStatus('PENDING', 1000), ...store.jobs.withStatus('FETCHED', 1000)]) {
    let w: { category: WaitCategory; reason: string };
    if (job.status === 'WAITING') {
      const open = store.jobs.dependencyStatuses(job.id).filter((d) => d.status !== 'COMPLETED');
      w = { category: 'dependency', reason: open.length ? `waiting for ${open.map((d) => `job ${d.id} (${d.status})`).join(', ')}` : 'dependencies done: promoted on the next pass' };
    } else if (job.status === 'FETCHED') {
      const off = job.backend?.startsWith('pool:') ? workerOffline(job.backend.slice(5)) : null;
      w = off ? { category: 'worker', reason: off } : { category: 'launching', reason: `claimed${job.backend ? ` by ${job.backend}` : ''}; waiting for it to start` };
    } else if (job.computer !== null && job.computer !== local) {
      const off = workerOffline(job.computer);
      const wk = workers.get(job.computer);
      w = off ? { category: 'worker', reason: off } : { category: 'slot', reason: `waiting for worker ${job.computer} to claim it (${wk ? `${wk.running}/${wk.slots} batch slots busy` : 'no slots reported'})` };
    } else if (!alive && ![...workers.values()].some((x) => workerOnline(x.lastSeen, now, offlineMs) && x.slots > 0)) {
      w = noDaemon;
    } else {
      const p = paused.get('local');
      w = p ? { category: 'backend', reason: `backend local paused: ${p}` } : { category: 'slot', reason: `waiting for a free batch slot here or on a worker (${ledger.filter((e) => e.kind === 'job').length} jobs in flight here)` };
    }
    items.push({ kind: 'job', routineId: null, runId: null, jobId: job.id, status: job.status, dueAt: null, ...w });
  }

  const upcoming = (
    store.db
      .prepare(`SELECT routine_id, next_run_at FROM triggers WHERE state = 'scheduled' AND next_run_at IS NOT NULL AND next_run_at > ? AND next_run_at <= ? ORDER BY next_run_at LIMIT 20`)
      .all(now, now + 86_400_000) as { routine_id: string; next_run_at: number }[]
  ).map((r) => ({ routineId: r.routine_id, at: iso(r.next_run_at)! }));

  return {
    daemon: { running: alive, pid, note: alive ? null : noDaemon.reason },
    items: items.slice(0, limit),
    upcoming,
    total: items.length,
    truncated: items.length > limit,
  };
}

/** Consecutive quick deaths of a realtime routine (as the daemon counts them). */
function quickDeaths(store: Store, routineId: string): number {
  let n = 0;
  for (const r of store.runs.recentRealtime(routineId, CRASH_LOOP + 2)) {
    if (r.status !== 'EXITED' || silenced(r)) break;
    if (r.startedAt !== null && r.endedAt !== null && r.endedAt - r.startedAt >= QUICK_DEATH_MS) break;
    n++;
    if (r.manual) break;
  }
  return n;
}
