// Derive status: late runs become DELAYED, runs past their timeout are stopped, realtime routines
// whose heartbeat went silent are restarted, and realtime routines with no live instance are
// started again (at once after a first death, then with backoff, never after a crash loop).
import type { RoutineDef, RunRow } from '../domain/types.js';
import { errorMessage } from '../errors.js';
import type { Ctx } from './context.js';
import { quickDeaths, SILENT } from './check.js';
import { moveRun } from './moves.js';

/** Why each waiting run has not started yet, kept from the last submit phase. */
export type WaitReasons = Map<string, string>;

export function markLate(ctx: Ctx, active: RunRow[], waiting: WaitReasons, now: number): void {
  for (const run of active) {
    if (run.status !== 'PENDING') continue;
    const def = ctx.defs.byId.get(run.routineId);
    if (!def) continue;
    const due = run.notBefore ?? run.scheduledAt;
    if (now - due <= def.toleranceMs) continue;
    // A run put back to wait (its start command expired unfetched) keeps the reason it was given.
    const why = waiting.get(run.id) ?? run.reason ?? 'not started';
    ctx.events.tx(() => {
      if (moveRun(ctx.store, run.id, 'batch', 'late', { reason: why })) {
        ctx.events.log({
          type: 'run:delayed',
          routineId: run.routineId,
          runId: run.id,
          message: `DELAYED: due ${new Date(due).toISOString()}, not started within ${Math.round(def.toleranceMs / 1000)}s (${why})`,
        });
      }
    });
  }
}

/** Stop a job without waiting for it: the check phase settles it when it is gone. */
export function stopAsync(ctx: Ctx, run: Pick<RunRow, 'id' | 'routineId'>): void {
  const entry = ctx.store.ledger.get('run', run.id);
  if (!entry || ctx.launches.stopping.has(run.id)) return;
  const backend = ctx.backends.get(entry.backend);
  if (!backend) return;
  const p = backend
    .cancel(entry.handle, ctx.opts.killGraceMs)
    .catch((err) => {
      ctx.events.log({ type: 'run:stop-failed', routineId: run.routineId, runId: run.id, message: `could not stop: ${errorMessage(err)}` });
    })
    .finally(() => ctx.launches.stopping.delete(run.id));
  ctx.launches.stopping.set(run.id, p);
}

/** The computer a submitted run is on: the pool names it; every other backend is this host's. */
function runComputer(ctx: Ctx, run: RunRow): string | null {
  if (run.backend === null) return null;
  return run.backend.startsWith('pool:') ? run.backend.slice('pool:'.length) : ctx.opts.computer;
}

/**
 * Runs whose routine was removed (CLI, API, UI, a schedule import that dropped it) or moved to
 * another computer: settled now and their process stopped (TERM, then KILL after the grace),
 * never left running where no definition supervises it. A realtime routine that moved ends
 * EXITED here, so that it starts at once on its new computer; a removed one ends STOPPED.
 * Returns how many it stopped.
 */
export function reapOrphans(ctx: Ctx, active: RunRow[], now: number): number {
  let reaped = 0;
  for (const run of active) {
    const def = ctx.defs.byId.get(run.routineId);
    const on = runComputer(ctx, run);
    const why = !def ? 'its routine was removed' : on !== null && on !== def.computer ? `its routine moved from ${on} to ${def.computer}` : null;
    if (!why) continue;
    const event = run.kind === 'batch' ? 'cancel' : def ? 'exit' : 'stop';
    ctx.events.tx(() => {
      if (moveRun(ctx.store, run.id, run.kind, event, { reason: why, endedAt: now })) {
        ctx.events.log({ type: run.kind === 'batch' ? 'run:cancelled' : 'run:stopped', routineId: run.routineId, runId: run.id, message: `${why}: its ${run.status} run is stopped` });
      }
    });
    stopAsync(ctx, run);
    reaped++;
  }
  return reaped;
}

export function enforceLimits(ctx: Ctx, active: RunRow[], now: number): void {
  for (const run of active) {
    if (run.status !== 'RUNNING' && run.status !== 'STARTING') continue;
    const def = ctx.defs.byId.get(run.routineId);
    // A run being stopped has its reason set already, which the checks below look at.
    if (!def) continue;
    const started = run.startedAt ?? run.createdAt;
    if (def.timeoutMs !== null && run.kind === 'batch' && now - started > def.timeoutMs && run.reason === null) {
      const reason = `timed out after ${Math.round(def.timeoutMs / 1000)}s`;
      ctx.store.runs.cas(run.id, [run.status], run.status, { reason });
      ctx.events.log({ type: 'run:timeout', routineId: run.routineId, runId: run.id, message: `${reason}; stopping it` });
      stopAsync(ctx, run);
      continue;
    }
    if (run.kind === 'realtime' && def.heartbeatMs !== null && run.status === 'RUNNING' && now - started > def.graceMs) {
      const last = Math.max(run.heartbeatAt ?? 0, started);
      if (now - last > def.heartbeatMs && run.reason === null) {
        const reason = `${SILENT} for ${Math.round((now - last) / 1000)}s (interval ${Math.round(def.heartbeatMs / 1000)}s)`;
        if (def.external) {
          // Tend cannot restart what it did not start: the routine needs attention.
          ctx.events.tx(() => {
            if (moveRun(ctx.store, run.id, run.kind, 'give_up', { reason: `${reason}; external routine, Tend cannot restart it`, endedAt: now })) {
              ctx.events.log({ type: 'routine:silent', routineId: run.routineId, runId: run.id, message: `ERROR: ${reason}; external routine, Tend cannot restart it` });
            }
          });
          continue;
        }
        ctx.store.runs.cas(run.id, ['RUNNING'], 'RUNNING', { reason });
        ctx.events.log({ type: 'run:silent', routineId: run.routineId, runId: run.id, message: `${reason}; restarting` });
        stopAsync(ctx, run);
      }
    }
  }
}

/** Backoff after quick deaths: the first restart is immediate, then 1 s doubling to 60 s. */
export function restartDelayMs(quick: number): number {
  if (quick <= 1) return 0;
  return Math.min(60_000, 1000 * 2 ** (quick - 2));
}

export interface RealtimeStart {
  def: RoutineDef;
}

/** Realtime routines that need a new instance now. */
/** Realtime routines to start now (`live`: routines with an active run; `only`: just that one, for the micro-pass after an exit). */
export function realtimeDue(ctx: Ctx, live: ReadonlySet<string>, waiting: Map<string, string>, now: number, only?: string): RealtimeStart[] {
  const out: RealtimeStart[] = [];
  for (const def of only === undefined ? ctx.defs.realtime : ctx.defs.realtime.filter((d) => d.id === only)) {
    if (def.external || live.has(def.id)) continue;
    const t = ctx.store.routines.trigger(def.id);
    if (t && t.state !== 'scheduled') continue; // paused
    const latest = ctx.store.runs.latest(def.id);
    if (latest && (latest.status === 'STOPPED' || latest.status === 'ERROR')) continue; // by hand / crash loop
    if (latest && latest.status === 'EXITED') {
      const wait = restartDelayMs(quickDeaths(ctx, def.id));
      const readyAt = (latest.endedAt ?? now) + wait;
      if (readyAt > now) {
        waiting.set(def.id, `restart backoff until ${new Date(readyAt).toISOString()}`);
        continue;
      }
    }
    out.push({ def });
  }
  return out;
}
