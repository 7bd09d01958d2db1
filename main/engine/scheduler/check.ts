// Check phase: poll every ledger entry through its backend (one poll call per backend), settle
// the terminal ones, clear them from the ledger. Runs before submit so free slots are honest.
import { describeOutcome, isSuccess, type Outcome, type PollState } from '../backend.js';
import type { RoutineDef, RunRow } from '../domain/types.js';
import { errorMessage } from '../errors.js';
import type { LedgerEntry } from '../store/ledger.js';
import type { SettlingRun } from '../store/runs.js';
import type { Ctx } from './context.js';
import { finalizeBatch } from './finalize.js';
import { moveJob, moveRun } from './moves.js';
import { stopAsync } from './supervise.js';
import { isTerminalRunStatus } from '../lifecycle/index.js';

/** Quick deaths: a realtime process up for less than this. */
export const QUICK_DEATH_MS = 60_000;
/** This many quick deaths in a row is a crash loop: ERROR, no more restarts. */
export const CRASH_LOOP = 5;

/**
 * A realtime run Tend stopped because its heartbeat went silent. It did not die on its own, so
 * it is no quick death: silence kills and crash loops are counted apart.
 */
export function silenced(run: Pick<RunRow, 'reason'>): boolean {
  return run.reason?.startsWith(SILENT) ?? false;
}
export const SILENT = 'heartbeat silent';

export async function check(ctx: Ctx, now: number, only?: Set<string>): Promise<number> {
  const entries = ctx.store.ledger.all().filter((e) => !only || only.has(`${e.kind}:${e.refId}`));
  const groups = new Map<string, LedgerEntry[]>();
  // Appended in place: copying the group for each entry made a pass quadratic in the work in flight
  // (2,000 running jobs: about 50 ms a pass).
  for (const e of entries) {
    const group = groups.get(e.backend);
    if (group) group.push(e);
    else groups.set(e.backend, [e]);
  }
  let settled = 0;
  for (const [name, group] of groups) {
    const backend = ctx.backends.get(name);
    if (!backend) {
      ctx.events.log({ type: 'backend:missing', message: `${group.length} job(s) recorded on backend "${name}", which is not configured` });
      continue;
    }
    let states: PollState[];
    try {
      states = await ctx.backends.bounded(backend.poll(group.map((e) => e.handle)), `${name} poll`);
    } catch (err) {
      ctx.events.log({ type: 'backend:poll-failed', message: `${name}: poll failed: ${errorMessage(err)}` });
      continue;
    }
    const running: { entry: LedgerEntry; startedAt: number; heartbeatAt: number | null }[] = [];
    const finished: { entry: LedgerEntry; outcome: Outcome }[] = [];
    const unsent: { entry: LedgerEntry; reason: string }[] = [];
    for (let i = 0; i < group.length; i++) {
      const entry = group[i]!;
      const state = states[i] ?? { state: 'lost', reason: 'backend returned no state' };
      if (state.state === 'running') running.push({ entry, startedAt: state.startedAt ?? now, heartbeatAt: state.heartbeatAt ?? null });
      else if (state.state === 'unsent' && entry.kind === 'run') unsent.push({ entry, reason: state.reason });
      else if (state.state === 'lost' || state.state === 'unsent') finished.push({ entry, outcome: { exitCode: null, signal: null, reason: state.reason, startedAt: null, endedAt: now } });
      else if (state.state === 'done') {
        let outcome: Outcome;
        try {
          outcome = await ctx.backends.bounded(backend.fetch(entry.handle), `${name} fetch`);
        } catch (err) {
          outcome = { exitCode: null, signal: null, reason: `could not read the result: ${errorMessage(err)}`, startedAt: null, endedAt: now };
        }
        finished.push({ entry, outcome });
      }
    }
    // One transaction for the whole batch: per-item faults become events, not a rolled-back pass.
    // Written first without a savepoint (one copies every page it changes to the sub-journal, which
    // cost about as much as the writes): if anything throws, that transaction is rolled back whole
    // and the batch written again with a savepoint per item, so a fault is an event on its item and
    // the others are written. Written again from the database as it was: every move is a CAS.
    const write = (careful: boolean): number =>
      ctx.events.tx(() => {
        const each = careful ? (entry: LedgerEntry, fn: () => void) => guarded(ctx, entry, () => ctx.events.tx(fn)) : (_: LedgerEntry, fn: () => void) => fn();
        for (const r of running) each(r.entry, () => observeRunning(ctx, r.entry, r.startedAt, r.heartbeatAt));
        const at = ctx.clock.now();
        let n = 0;
        // Without savepoints, the runs finished leave the ledger and are read together (a statement
        // each per run was a fifth of settling); one by one, each in its own savepoint, when redone.
        const taken = careful ? undefined : take(ctx, finished);
        for (const f of finished) each(f.entry, () => (settleInTx(ctx, f.entry, f.outcome, at, taken), n++));
        for (const u of unsent) each(u.entry, () => requeue(ctx, u.entry, u.reason));
        return n;
      });
    try {
      settled += write(false);
    } catch {
      settled += write(true);
    }
  }
  return settled;
}

function guarded(ctx: Ctx, entry: LedgerEntry, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    ctx.events.log({ type: 'check:fault', runId: entry.kind === 'run' ? entry.refId : null, jobId: entry.kind === 'job' ? Number(entry.refId) : null, message: errorMessage(err) });
  }
}

function observeRunning(ctx: Ctx, entry: LedgerEntry, startedAt: number, heartbeatAt: number | null): void {
  if (entry.kind === 'job') {
    const id = Number(entry.refId);
    // Moves only from FETCHED: a job seen running before is left as it is.
    if (moveJob(ctx.store, id, 'start', { startedAt }, ctx.clock.now())) ctx.events.log({ type: 'job:running', jobId: id, message: `job ${id} running` });
    return;
  }
  // Only what this reads: a pass observes every run in flight (2,000 running: the whole rows
  // were a fifth of the pass).
  const run = ctx.store.runs.state(entry.refId);
  if (!run) return;
  if (isTerminalRunStatus(run.status, run.kind)) {
    // Stopped by hand (perhaps from the CLI, which cannot reach a worker host), or its routine was
    // removed or moved, yet still running.
    stopAsync(ctx, run);
    return;
  }
  // The store keeps only a newer beat: one reported again, or older, changes nothing.
  if (heartbeatAt !== null) ctx.store.runs.recordHeartbeat(run.id, heartbeatAt);
  if (run.status !== 'STARTING') return;
  if (moveRun(ctx.store, run.id, run.kind, 'started', { startedAt })) {
    ctx.events.log({ type: 'run:running', routineId: run.routineId, runId: run.id, message: `running (attempt ${run.attempt})` });
  }
}

/** Settle a finished run or job exactly once: the ledger row is cleared in the same transaction. */
export function settle(ctx: Ctx, entry: LedgerEntry, outcome: Outcome, now: number): void {
  ctx.events.tx(() => settleInTx(ctx, entry, outcome, now));
}

/**
 * The finished runs taken off the ledger together, each read (null: not in the runs table); a run
 * left out was not in the ledger: settled already.
 */
type Taken = Map<string, SettlingRun | null>;

function take(ctx: Ctx, finished: readonly { entry: LedgerEntry }[]): Taken {
  const ids = finished.filter((f) => f.entry.kind === 'run').map((f) => f.entry.refId);
  const cleared = [...ctx.store.ledger.clearRuns(ids)];
  const rows = ctx.store.runs.settling(cleared);
  return new Map(cleared.map((id) => [id, rows.get(id) ?? null]));
}

/** `settle`, inside a transaction the caller opened: what it wrote is kept or taken back with it. `taken`: the runs cleared already. */
function settleInTx(ctx: Ctx, entry: LedgerEntry, outcome: Outcome, now: number, taken?: Taken): void {
  if (entry.kind === 'job') return settleJob(ctx, entry, outcome, now);
  let run: SettlingRun | null | undefined;
  if (taken) run = taken.get(entry.refId);
  else if (ctx.store.ledger.clear(entry.kind, entry.refId)) run = ctx.store.runs.get(entry.refId);
  if (!run) return; // settled already (replay is a no-op), or no such run
  const def = ctx.defs.byId.get(run.routineId) ?? null;
  if (run.kind === 'batch') settleBatch(ctx, run, def, outcome, now);
  else settleRealtime(ctx, run, outcome, now);
}

/**
 * A run that was never handed over never ran: it leaves the ledger and waits again (a batch run
 * PENDING, DELAYED once late; a realtime run STARTING, which the submit phase sends again), with
 * no attempt spent. Stopped by hand meanwhile, it is terminal already and there is nothing to stop.
 */
function requeue(ctx: Ctx, entry: LedgerEntry, reason: string): void {
  const run = ctx.store.runs.get(entry.refId);
  if (!ctx.store.ledger.clear(entry.kind, entry.refId)) return;
  if (!run) return;
  // A realtime run keeps a null reason: a reason on a live instance means "being stopped".
  if (!moveRun(ctx.store, run.id, run.kind, 'unsent', run.kind === 'batch' ? { reason } : {})) return;
  ctx.events.log({ type: 'run:unsent', routineId: run.routineId, runId: run.id, message: `${reason}; it never ran (attempt ${run.attempt} not spent)` });
}

function base(outcome: Outcome, now: number) {
  return { exitCode: outcome.exitCode, signal: outcome.signal, endedAt: outcome.endedAt ?? now };
}

function settleBatch(ctx: Ctx, run: SettlingRun, def: RoutineDef | null, outcome: Outcome, now: number): void {
  // A reason set while running (timeout, stopped by hand) explains the exit better than the exit does.
  const ok = isSuccess(outcome) && run.reason === null;
  const reason = ok ? null : (run.reason ?? describeOutcome(outcome));
  const to = moveRun(ctx.store, run.id, 'batch', ok ? 'succeed' : 'fail', { ...base(outcome, now), reason, startedAt: run.startedAt ?? outcome.startedAt }, run);
  if (!to) {
    // Stopped by hand: the run is CANCELLED already; keep how the process actually ended.
    ctx.store.runs.cas(run.id, [run.status], run.status, base(outcome, now));
    return;
  }
  ctx.events.log({
    type: ok ? 'run:completed' : 'run:failed',
    routineId: run.routineId,
    runId: run.id,
    message: ok ? 'completed' : `failed: ${reason}`,
    data: { exitCode: outcome.exitCode, signal: outcome.signal },
  });
  finalizeBatch(ctx.store, (e) => ctx.events.log(e), run, def, ok, reason, now);
}

function settleRealtime(ctx: Ctx, run: SettlingRun, outcome: Outcome, now: number): void {
  const ended = outcome.endedAt ?? now;
  const reason = run.reason ?? describeOutcome(outcome);
  const quick = !silenced(run) && (run.startedAt === null || ended - run.startedAt < QUICK_DEATH_MS);
  const streak = quick ? quickDeaths(ctx, run.routineId, run.id) + 1 : 0;
  const giveUp = streak >= CRASH_LOOP;
  const to = moveRun(
    ctx.store,
    run.id,
    run.kind,
    giveUp ? 'give_up' : 'exit',
    { ...base(outcome, now), reason: giveUp ? `crash loop: ${streak} quick deaths in a row, last: ${reason}` : reason },
    run,
  );
  if (!to) {
    ctx.store.runs.cas(run.id, [run.status], run.status, base(outcome, now));
    return;
  }
  ctx.events.log({
    type: giveUp ? 'routine:crash-loop' : 'run:exited',
    routineId: run.routineId,
    runId: run.id,
    message: giveUp ? `gave up after ${streak} quick deaths (last: ${reason}); restart it by hand` : `exited: ${reason}`,
    data: { exitCode: outcome.exitCode, signal: outcome.signal, quickDeaths: streak },
  });
}

/** Consecutive quick EXITED instances before this one (a manual restart or a long run breaks the streak). */
export function quickDeaths(ctx: Ctx, routineId: string, exceptRunId?: string): number {
  let n = 0;
  for (const r of ctx.store.runs.recentRealtime(routineId, CRASH_LOOP + 2)) {
    if (r.id === exceptRunId) continue;
    if (r.status !== 'EXITED' || silenced(r)) break;
    // An EXITED run always has its end; one never seen running lived too briefly to be seen.
    if (r.startedAt !== null && (r.endedAt ?? 0) - r.startedAt >= QUICK_DEATH_MS) break;
    n++;
    if (r.manual) break;
  }
  return n;
}

function settleJob(ctx: Ctx, entry: LedgerEntry, outcome: Outcome, now: number): void {
  const id = Number(entry.refId);
  if (!ctx.store.ledger.clear('job', entry.refId)) return;
  const ok = isSuccess(outcome);
  const reason = ok ? null : describeOutcome(outcome);
  const patch = { ...base(outcome, now), reason };
  // A job can finish between two polls: FETCHED → RUNNING → end, in one step.
  moveJob(ctx.store, id, 'start', { startedAt: outcome.startedAt ?? now }, now);
  const to = moveJob(ctx.store, id, ok ? 'succeed' : 'fail', patch, now);
  if (!to) return;
  ctx.events.log({
    type: ok ? 'job:completed' : 'job:failed',
    jobId: id,
    message: ok ? `job ${id} completed` : `job ${id} failed: ${reason}`,
    data: { exitCode: outcome.exitCode, signal: outcome.signal },
  });
}
