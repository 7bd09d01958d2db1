// Due triggers become runs. Cost follows the due work: one indexed query, nothing per idle routine.
// Firing moves the triggers and says which runs they create; the caller writes those runs in the
// same transaction, each once, as it starts (claimed at once) or waits (submit.ts).
import type { RoutineDef, RunRow } from '../domain/types.js';
import { errorMessage } from '../errors.js';
import { newRun } from '../domain/run.js';
import type { DueTrigger, TriggerPatch } from '../store/routines.js';
import { nextRunAt } from '../timing/next.js';
import type { Ctx } from './context.js';
import { moveTrigger } from './moves.js';

const DUE_BATCH = 5000;
/** Catch-up runs after downtime or sleep start this far apart, within CATCH_UP_WINDOW_MS. */
const CATCH_UP_SPACING_MS = 500;
const CATCH_UP_WINDOW_MS = 60_000;

/** The triggers due now (a read: it changes nothing, so a caller may look before it fires). */
export function dueTriggers(ctx: Ctx, now: number): DueTrigger[] {
  return ctx.store.routines.dueTriggers(now, DUE_BATCH);
}

/** The unfinished runs by routine, as the database holds them now (read by the pass, nothing written since). */
export type ActiveByRoutine = ReadonlyMap<string, readonly RunRow[]>;

/**
 * Inside the caller's write transaction: take each due trigger and return the runs it creates, in
 * firing order, unwritten (the caller writes them before the transaction ends). Reads first and
 * writes only per trigger, each trigger's fault an event: once it has written, it does not throw.
 * `active`: the unfinished runs, for the overlap checks; unset, each routine's are read. `due`: the
 * due triggers as read before the transaction, when nothing was written since; unset, read here.
 */
export function fireDue(ctx: Ctx, now: number, active?: ActiveByRoutine, due?: readonly DueTrigger[]): RunRow[] {
  // The pass loaded the definitions before awaiting its backends; one saved meanwhile (a past
  // `at` is due at once) must be fired as it is now, not disarmed as unknown.
  ctx.defs.refresh(ctx.store);
  const runs: RunRow[] = [];
  const catchUp = { count: 0 };
  for (const t of due ?? dueTriggers(ctx, now)) {
    try {
      fireOne(ctx, t, now, catchUp, runs, active);
    } catch (err) {
      ctx.events.log({ type: 'trigger:fault', routineId: t.routineId, message: `could not fire: ${errorMessage(err)}` });
    }
  }
  return runs;
}

/**
 * The runs the due triggers would create if fired now, as far as can be told without firing (no
 * misfire policy applied, no overlap checked): the backends the submit phase asks for health.
 */
export function dueRuns(ctx: Ctx, due: readonly DueTrigger[], now: number): RunRow[] {
  const out: RunRow[] = [];
  for (const t of due) {
    const def = ctx.defs.byId.get(t.routineId);
    // Named for its routine: a look ahead needs no run id of its own.
    if (def?.kind === 'batch' && def.timing && t.nextRunAt !== null) out.push(newRun(def, t.nextRunAt, now, { id: `due:${def.id}` }));
  }
  return out;
}

function fireOne(ctx: Ctx, t: DueTrigger, now: number, catchUp: { count: number }, runs: RunRow[], active: ActiveByRoutine | undefined): void {
  const def = ctx.defs.byId.get(t.routineId);
  if (!def || def.kind !== 'batch' || !def.timing) {
    // Nothing to run at this time: take it, arming nothing.
    moveTrigger(ctx.store, t, 'fire', { nextRunAt: null }, now);
    return;
  }
  const first = t.nextRunAt!;
  let instants = [first];
  const late = now - first > ctx.opts.misfireAfterMs;
  if (late) instants = misfired(ctx, def, first, now);

  const timing = def.timing;
  const next: TriggerPatch = { lastFiredAt: now };
  // A one-shot whose only time was skipped by its misfire policy will never run.
  const event = timing.mode === 'at' && instants.length === 0 ? 'cancel' : 'fire';
  if (timing.mode === 'at') {
    next.nextRunAt = null;
  } else if (timing.mode === 'every') {
    // The next time is computed when the attempt completes, so a loop never overlaps itself.
    next.nextRunAt = instants.length === 0 ? nextRunAt(timing, now, def.tz) : null;
  } else {
    next.nextRunAt = nextRunAt(timing, now, def.tz);
  }
  // The retry window counts from here; without retries nothing reads it, and not setting it spares
  // a trigger write when the run succeeds (finalize resets only what was set).
  if (t.firstDueAt === null && def.retry.delayMs > 0) next.firstDueAt = instants[0] ?? null;
  // Only the mover that took the due time creates its runs.
  if (!moveTrigger(ctx.store, t, event, next, now)) return;

  const replay = instants.length > 1;
  for (const at of instants) {
    if (!replay && !overlapAllows(ctx, def, at, active)) continue;
    // After a sleep or downtime, spread the catch-up starts instead of launching all at once.
    const notBefore = late ? now + Math.min(catchUp.count++ * CATCH_UP_SPACING_MS, CATCH_UP_WINDOW_MS) : null;
    runs.push(newRun(def, at, now, { attempt: 1, manual: false, notBefore: notBefore === now ? null : notBefore }));
  }
}

/** Downtime or sleep swallowed one or more due times: apply the routine's misfire policy. */
function misfired(ctx: Ctx, def: RoutineDef, first: number, now: number): number[] {
  const cap = Math.max(1, ctx.opts.misfireAllCap);
  const { recent, total, exact } = latestMissed(def, first, now, cap);
  const chosen = def.misfire === 'skip' ? [] : def.misfire === 'once' ? [recent[recent.length - 1]!] : recent;
  ctx.events.log({
    type: 'trigger:misfire',
    routineId: def.id,
    message:
      `missed ${total}${exact ? '' : '+'} run time(s) since ${new Date(first).toISOString()} ` +
      `(misfire: ${def.misfire}): ${chosen.length === 0 ? 'skipped' : `running ${chosen.length}`}`,
    data: { missed: total, running: chosen.length, policy: def.misfire },
  });
  return chosen;
}

const LOOKBACK_MS = 3_600_000;

/**
 * The latest `keep` due times in [first, now] (ascending) — `once` runs the most recent one, `all`
 * the most recent `keep`. Scans back from `now` in doubling windows, so weeks of downtime under a
 * dense cron cost a bounded amount of work; `exact` says whether `total` counted back to `first`.
 */
function latestMissed(def: RoutineDef, first: number, now: number, keep: number): { recent: number[]; total: number; exact: boolean } {
  const timing = def.timing!;
  // A loop has one missed run at most: its next time is computed from the end of the last. (A
  // one-shot's single time is found by the search below.)
  if (timing.mode === 'every') return { recent: [first], total: 1, exact: true };
  for (let span = LOOKBACK_MS; ; span *= 2) {
    const exact = now - span <= first;
    const recent = exact ? [first] : [];
    let total = recent.length;
    let cursor = exact ? first : now - span;
    for (;;) {
      const n = nextRunAt(timing, cursor, def.tz);
      if (n === null || n > now) break;
      recent.push(n);
      if (recent.length > keep) recent.shift();
      total++;
      cursor = n;
    }
    if (exact || total >= keep) return { recent, total, exact };
  }
}

function overlapAllows(ctx: Ctx, def: RoutineDef, at: number, inFlight: ActiveByRoutine | undefined): boolean {
  if (def.overlap === 'allow') return true;
  const active = inFlight ? (inFlight.get(def.id) ?? []) : ctx.store.runs.activeFor(def.id);
  if (active.length === 0) return true;
  const waiting = active.some((r) => r.status === 'PENDING' || r.status === 'DELAYED');
  if (def.overlap === 'queue-one' && !waiting) return true;
  ctx.events.log({
    type: 'run:skipped',
    routineId: def.id,
    message: `run time ${new Date(at).toISOString()} skipped: the previous run is still ${active[0]!.status} (overlap: ${def.overlap})`,
  });
  return false;
}
