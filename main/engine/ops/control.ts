// One-click operations: run now, stop, restart, cancel a job. The UI's buttons, the CLI and the
// HTTP API call these. Stopping goes through the backend with the durable handle from the
// ledger, so any process on this host can stop a job, whoever launched it.
import type { BackendLookup } from '../backend.js';
import type { RoutineDef, RunRow } from '../domain/types.js';
import { notFound, TendError } from '../errors.js';
import { newRun } from '../domain/run.js';
import { moveJob, moveRun } from '../scheduler/moves.js';
import type { Store } from '../store/store.js';

export interface ControlDeps {
  store: Store;
  /** Every backend a ledger entry may name (local, slurm, pool:<computer>). */
  backends: BackendLookup;
  now: () => number;
  killGraceMs: number;
  /** A command to a remote worker expires this long after it is queued (Settings.commandTtlMs). */
  commandTtlMs: number;
  /** Ask the scheduler for a pass now (in-process nudge, or a signal to the daemon). */
  nudge: () => void;
  /** Answer a worker's long poll at once (a command was queued for it). */
  wakeWorker?: (computer: string) => void;
}

function routine(store: Store, id: string): RoutineDef {
  const def = store.routines.get(id);
  if (!def) throw notFound(`routine ${id}`);
  return def;
}

/** An observe-only schedule sends no command: a run queued there would only fire later, on activate. */
function refuseObserved(store: Store, def: RoutineDef, verb: string): void {
  if (store.routines.schedule(def.schedule)?.mode !== 'observe') return;
  throw new TendError('REFUSED', `cannot ${verb} ${def.id}: its schedule ${def.schedule} is observe-only, so Tend starts nothing there (tend schedule activate ${def.schedule} first)`);
}

/** Queue a manual run (batch: PENDING, ignoring the timing; realtime: a new instance). */
export function runNow(d: ControlDeps, id: string): RunRow {
  const def = routine(d.store, id);
  if (def.external) throw new TendError('REFUSED', `${id} is external: Tend never starts it; it reports over the API`);
  refuseObserved(d.store, def, 'run');
  const now = d.now();
  const active = d.store.runs.activeFor(id);
  if (def.kind === 'realtime' && active.length > 0) throw new TendError('CONFLICT', `${id} is already ${active[0]!.status} (use restart)`);
  if (def.kind === 'batch' && def.overlap !== 'allow' && active.some((r) => r.status === 'PENDING' || r.status === 'DELAYED' || r.manual)) {
    throw new TendError('CONFLICT', `${id} already has a run ${active[0]!.status}`);
  }
  const run = newRun(def, now, now, { manual: true });
  d.store.tx(() => {
    d.store.runs.insert(run);
    d.store.events.append({ type: 'run:requested', routineId: id, runId: run.id, message: 'run requested by hand' }, now);
  });
  d.nudge();
  return run;
}

/** Stop every active run of a routine: TERM, then KILL after the grace period. Resolves when gone. */
export async function stopRoutine(d: ControlDeps, id: string, reason = 'stopped by hand'): Promise<RunRow[]> {
  routine(d.store, id);
  const stopped: RunRow[] = [];
  for (const run of d.store.runs.activeFor(id)) {
    const now = d.now();
    const event = run.kind === 'batch' ? 'cancel' : 'stop';
    const entry = d.store.ledger.get('run', run.id);
    const to = d.store.tx(() => {
      const moved = moveRun(d.store, run.id, run.kind, event, { reason, endedAt: now });
      if (moved) d.store.events.append({ type: run.kind === 'batch' ? 'run:cancelled' : 'run:stopped', routineId: id, runId: run.id, message: reason }, now);
      return moved;
    });
    if (!to) continue;
    if (entry) {
      const backend = d.backends.get(entry.backend);
      if (backend) await backend.cancel(entry.handle, d.killGraceMs);
    }
    stopped.push(d.store.runs.get(run.id)!);
  }
  d.nudge();
  return stopped;
}

/** Stop then start, as one operation. */
export async function restartRoutine(d: ControlDeps, id: string): Promise<{ stopped: RunRow[]; started: RunRow }> {
  const def = routine(d.store, id);
  if (def.external) throw new TendError('REFUSED', `${id} is external: Tend cannot restart it`);
  refuseObserved(d.store, def, 'restart');
  const stopped = await stopRoutine(d, id, 'restarted by hand');
  const started = runNow(d, id);
  return { stopped, started };
}

export async function cancelJob(d: ControlDeps, jobId: number): Promise<void> {
  const job = d.store.jobs.get(jobId);
  if (!job) throw notFound(`job ${jobId}`);
  const now = d.now();
  const entry = d.store.ledger.get('job', String(jobId));
  const moved = d.store.tx(() => {
    const to = moveJob(d.store, jobId, 'cancel', { reason: 'cancelled by hand', endedAt: now }, now);
    if (to) d.store.events.append({ type: 'job:cancelled', jobId, message: `job ${jobId} cancelled by hand` }, now);
    return to;
  });
  if (!moved) throw new TendError('CONFLICT', `job ${jobId} is ${job.status} already`);
  if (entry) await d.backends.get(entry.backend)?.cancel(entry.handle, d.killGraceMs);
  else if (job.backend?.startsWith('pool:') && (job.status === 'FETCHED' || job.status === 'RUNNING')) {
    // Held by a worker on another host: ask it to stop the job.
    const computer = job.backend.slice('pool:'.length);
    d.store.pool.enqueue(computer, 'cancel', { runId: `job-${jobId}`, kind: 'job', graceMs: d.killGraceMs }, now, d.commandTtlMs);
    d.wakeWorker?.(computer);
  }
  d.nudge();
}
