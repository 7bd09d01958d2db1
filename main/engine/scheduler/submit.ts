// Submit phase: backlog gate (cheap) before health gate (asks the backend); then one write
// transaction that fires the due triggers (a full pass) and claims up to the free slots; build the
// spec; submit; record the handle in the ledger in the same transaction that completes the claim.
// A crash between claim and record leaves a lease that goes stale, and the resubmission of the
// same run id finds its job directory instead of launching twice. A run fired and claimed in the
// same transaction is written once, STARTING on its backend in its directory: no PENDING row
// moved a moment later.
import type { Handle, JobSpec } from '../backend.js';
import { newRun } from '../domain/run.js';
import type { RunRow, RunStatus } from '../domain/types.js';
import { errorMessage } from '../errors.js';
import { batchRunMachine } from '../lifecycle/index.js';
import { afterCommit } from '../store/after-commit.js';
import { collect, unwritten, withUnwritten, type BacklogInput, type Item } from './backlog.js';
import type { Ctx } from './context.js';
import { dueRuns, dueTriggers, fireDue } from './fire.js';
import { finalizeBatch } from './finalize.js';
import { moveJob, moveRun } from './moves.js';
import { jobSpec, runDirFor, runSpec } from './spec.js';

export interface Claimed {
  item: Item;
  run: RunRow | null;
  spec: JobSpec;
  queue: 'run' | 'job';
  key: string;
}

export type SubmitInput = BacklogInput;

/**
 * What the transaction of the submit phase fired and claimed; `fault`: firing could not read the due
 * triggers; `mark`: the store's change mark as that transaction committed (null: it did not run).
 */
export interface Claims {
  fired: number;
  claimed: Claimed[];
  fault: unknown;
  mark: string | null;
}

/** PENDING ─launch▶ STARTING: the status a run fired and claimed at once is written with. */
const LAUNCHED = batchRunMachine.transition('PENDING', 'launch').state;

export async function submit(ctx: Ctx, now: number, input: SubmitInput): Promise<number> {
  const claims = await claim(ctx, now, input, false);
  return launch(ctx, claims.claimed, claims.mark);
}

/**
 * The submit phase up to its launches. With `fire`, the due triggers are fired in the transaction
 * that claims: the health gate is asked first, for the backends of the waiting work and of the
 * runs the due triggers would create (dueRuns), so that a fired run that may start is claimed
 * as it is written. `mark`: the store's change mark when `input.active` was read; still the mark
 * once the transaction holds the write lock, the overlap checks of firing read that list instead of
 * the runs table, a read per due routine.
 */
export async function claim(ctx: Ctx, now: number, input: SubmitInput, fire: boolean, mark?: string): Promise<Claims> {
  let fault: unknown = null;
  const ledger = ctx.store.ledger.keys();
  const inLedger = new Set(ledger.map((e) => `${e.kind}:${e.refId}`));
  let due: ReturnType<typeof dueTriggers> = [];
  // The change mark the due triggers were read at: still the mark once the transaction holds the
  // write lock, firing takes them as read instead of reading them again.
  let dueMark: string | null = null;
  try {
    if (fire) {
      due = dueTriggers(ctx, now);
      dueMark = ctx.store.changeMark();
    }
  } catch (err) {
    fault = err;
    fire = false;
  }
  // What would wait if the due triggers were fired now: their reasons are the transaction's to give.
  const seen = new Map<string, string>();
  const backlog = collect(ctx, now, { ...input, active: withUnwritten(input.active, dueRuns(ctx, due, now)), waiting: seen }, inLedger);
  if (backlog.length === 0 && due.length === 0) {
    for (const [k, v] of seen) input.waiting.set(k, v);
    return { fired: 0, claimed: [], fault, mark: null };
  }

  // Health gate, only for backends with waiting work.
  const healthy = new Map<string, boolean>();
  for (const name of new Set(backlog.map((i) => i.backend))) healthy.set(name, await gate(ctx, name));

  let committedAt: string | null = null;
  const claims = ctx.events.tx((): Claims => {
    // Taken as the transaction commits, before the work that waited for the commit (listeners of
    // its events) runs: what they write moves the mark.
    afterCommit(ctx.store.db, () => (committedAt = ctx.store.changeMark()));
    let runs: RunRow[] = [];
    if (fire) {
      try {
        const current = ctx.store.changeMark();
        runs = fireDue(ctx, now, mark === current ? unwritten(input.active) : undefined, dueMark === current ? due : undefined);
      } catch (err) {
        fault = err; // it read nothing it could fire (fireDue does not throw once it has written)
      }
    }
    const fresh = unwritten(runs);
    const items = collect(ctx, now, { ...input, active: withUnwritten(input.active, runs) }, inLedger, fresh);
    const picked = pick(ctx, items, healthy, input, ledger, inLedger);
    const written = writeFired(ctx, runs, picked);
    const claimed = picked.map((item) => claimOne(ctx, item, now, written)).filter((c): c is Claimed => c !== null);
    return { fired: written.size, claimed, fault, mark: null };
  });
  claims.mark = committedAt;
  return claims;
}

/** The items that get a slot now (up to the free slots, per schedule too); the others are noted waiting. */
function pick(ctx: Ctx, items: Item[], healthy: Map<string, boolean>, input: SubmitInput, ledger: { kind: string }[], inLedger: Set<string>): Item[] {
  const { waiting } = input;
  // Slots are counted after the check phase cleared what finished; launches in flight hold theirs.
  const launching = [...ctx.launches.launching.values()];
  let free = ctx.opts.maxParallel - ledger.length - launching.length;
  let jobSlots = (ctx.opts.batchSlots ?? ctx.opts.maxParallel) - ledger.filter((e) => e.kind === 'job').length - launching.filter((l) => l.queue === 'job').length;
  // Jobs (no schedule) and runs of removed routines are counted under no name: only named ones are read.
  const perSchedule = new Map<string | null | undefined, number>();
  for (const l of launching) perSchedule.set(l.schedule, (perSchedule.get(l.schedule) ?? 0) + 1);
  // A run in the ledger holds a slot in its schedule (claiming moved it STARTING; settling takes it out).
  for (const r of input.active) {
    if (inLedger.has(`run:${r.id}`)) {
      const s = ctx.defs.byId.get(r.routineId)?.schedule;
      perSchedule.set(s, (perSchedule.get(s) ?? 0) + 1);
    }
  }
  const picked: Item[] = [];
  for (const item of items) {
    const ok = healthy.get(item.backend);
    // Not asked: a definition saved while the gate was asked sent this run elsewhere; the next pass asks.
    if (ok === undefined) continue;
    if (!ok) {
      note(waiting, item, `backend ${item.backend} paused: ${ctx.backends.paused.get(item.backend) ?? 'unhealthy'}`);
      continue;
    }
    if (free <= 0) {
      note(waiting, item, `no free slot (max_parallel ${ctx.opts.maxParallel})`);
      continue;
    }
    if (item.kind === 'job') {
      if (jobSlots <= 0) continue; // another worker with a free batch slot may take it
      jobSlots--;
    }
    if (item.schedule) {
      const max = ctx.defs.schedules.get(item.schedule)?.maxParallel ?? null;
      const used = perSchedule.get(item.schedule) ?? 0;
      if (max !== null && used >= max) {
        note(waiting, item, `no free slot in schedule ${item.schedule} (max_parallel ${max})`);
        continue;
      }
      perSchedule.set(item.schedule, used + 1);
    }
    free--;
    picked.push(item);
  }
  return picked;
}

/**
 * Write the runs this transaction fired, in firing order (their rowids order them as before): a
 * picked one STARTING on its backend in its directory, the others PENDING. Returns each written
 * run by the unwritten one; a run that could not be written is a fault on its trigger, left out.
 */
function writeFired(ctx: Ctx, runs: RunRow[], picked: Item[]): Map<RunRow, RunRow> {
  const starting = new Map<RunRow, string>();
  // Keyed by the unwritten run: only the fired ones (item.fresh) are looked up.
  for (const item of picked) if (item.kind === 'run') starting.set(item.run, item.backend);
  const written = new Map<RunRow, RunRow>();
  // Their routines' chain heads read together, not one read per insert (store/chain.ts).
  ctx.store.runs.insertingFor(
    runs.map((r) => r.routineId),
    () => {
      for (const run of runs) {
        const backend = starting.get(run);
        const row = backend === undefined ? run : { ...run, status: LAUNCHED, backend, runDir: runDirFor(ctx.opts.dataDir, run.id, run.createdAt) };
        try {
          ctx.store.runs.insert(row);
          written.set(run, row);
        } catch (err) {
          ctx.events.log({ type: 'trigger:fault', routineId: run.routineId, message: `could not fire: ${errorMessage(err)}` });
        }
      }
    },
  );
  return written;
}

/**
 * Claimed and launched: the number launched (in the background: the number set going). `mark`: the
 * store's change mark as the claims committed (Claims.mark).
 */
export async function launch(ctx: Ctx, claimed: Claimed[], mark: string | null = null): Promise<number> {
  if (claimed.length === 0) return 0;
  if (ctx.opts.launchInBackground) {
    for (const c of claimed) launchInBackground(ctx, c);
    return claimed.length;
  }
  // Launches are independent: submit them together. No deadline here: a submit that gave up
  // while the backend still launched would leave an unrecorded job.
  const results = await Promise.all(
    claimed.map(async (c): Promise<Answer> => {
      try {
        return { c, handle: await ctx.backends.get(c.item.backend)!.submit(c.spec), error: undefined };
      } catch (err) {
        return { c, handle: undefined, error: errorMessage(err) };
      }
    }),
  );
  const at = ctx.clock.now();
  ctx.events.tx(() => recordAll(ctx, results, at, mark));
  return results.filter((r) => r.handle).length;
}

/**
 * Submit without holding up the pass: the claim's lease covers the launch until its handle is
 * recorded (a crash in between leaves a stale lease, and the resubmission adopts the job dir).
 * The launches answered in the same turn of the event loop are recorded together, in one
 * transaction (a pass's hundred launches were a hundred commits).
 */
function launchInBackground(ctx: Ctx, c: Claimed): void {
  const key = `${c.queue}:${c.key}`;
  const done = Promise.resolve()
    .then(() => ctx.backends.get(c.item.backend)!.submit(c.spec))
    .then(
      (handle) => ({ c, handle, error: undefined }),
      (err: unknown): Answer => ({ c, handle: undefined, error: errorMessage(err) }),
    )
    .then((r) => ctx.launches.gather(r, (answered: Answer[]) => recordAnswered(ctx, answered)));
  ctx.launches.launching.set(key, { done, queue: c.queue, schedule: c.item.schedule });
}

/** The launches answered in one turn, recorded in one transaction (each in its own if that fails). */
function recordAnswered(ctx: Ctx, answered: Answer[]): void {
  for (const a of answered) ctx.launches.launching.delete(`${a.c.queue}:${a.c.key}`);
  const write = (rs: Answer[]) => ctx.events.tx(() => recordAll(ctx, rs, ctx.clock.now()));
  try {
    write(answered);
  } catch {
    // Each on its own, as when they were recorded one by one: one that cannot be recorded is a
    // fault of its own, and the store failing is a fault of each (their leases go stale, and a
    // later pass adopts what was launched).
    for (const a of answered) {
      try {
        write([a]);
      } catch (err) {
        try {
          const ref = a.c.queue === 'run' ? { runId: a.c.key } : { jobId: Number(a.c.key) };
          ctx.events.log({ type: 'submit:fault', ...ref, message: `could not record the launch: ${errorMessage(err)}` });
        } catch {
          /* nothing more to do */
        }
      }
    }
  }
  ctx.launches.onLaunched();
}

interface Answer {
  c: Claimed;
  handle: Handle | undefined;
  error: string | undefined;
}

function note(waiting: Map<string, string>, item: Item, why: string): void {
  if (item.kind === 'run') waiting.set(item.run.id, why);
  else if (item.kind === 'start') waiting.set(item.def.id, why);
  else waiting.set(`job:${item.job.id}`, why);
}

async function gate(ctx: Ctx, name: string): Promise<boolean> {
  const backend = ctx.backends.get(name);
  if (!backend) return false;
  let ok = false;
  let reason: string | null = null;
  try {
    const h = await ctx.backends.bounded(backend.health(), `${name} health`);
    ok = h.ok;
    reason = h.reason;
  } catch (err) {
    reason = errorMessage(err);
  }
  const was = ctx.backends.paused.get(name);
  if (!ok) {
    const why = reason ?? 'unhealthy';
    if (was === undefined) ctx.events.log({ type: 'backend:paused', message: `backend ${name} paused: ${why}; nothing fails, waiting work stays queued` });
    ctx.backends.paused.set(name, why);
  } else if (was !== undefined) {
    ctx.backends.paused.delete(name);
    ctx.events.log({ type: 'backend:resumed', message: `backend ${name} healthy again` });
  }
  return ok;
}

function claimOne(ctx: Ctx, item: Item, now: number, written: Map<RunRow, RunRow>): Claimed | null {
  const owner = ctx.opts.owner;
  if (item.kind === 'job') {
    const key = String(item.job.id);
    if (!ctx.store.ledger.claim('job', key, owner, now)) return null;
    const runDir = item.job.runDir ?? runDirFor(ctx.opts.dataDir, `job-${item.job.id}`, item.job.createdAt);
    if (!moveJob(ctx.store, item.job.id, 'claim', { runDir, backend: item.backend, fetchedBy: ctx.opts.computer }, now)) {
      ctx.store.ledger.release('job', key);
      return null;
    }
    return { item, run: null, spec: jobSpec(ctx.opts.dataDir, { ...item.job, runDir }), queue: 'job', key };
  }
  let run: RunRow;
  if (item.kind === 'start') {
    // A new instance is written once: STARTING, on its backend, in its directory (a pure function of its id).
    const fresh = newRun(item.def, now, now);
    run = { ...fresh, backend: item.backend, runDir: runDirFor(ctx.opts.dataDir, fresh.id, fresh.createdAt) };
    ctx.store.runs.insert(run);
  } else if (item.fresh) {
    // Written STARTING by writeFired: the lease is all that is left to take.
    const fired = written.get(item.run);
    if (!fired || !ctx.store.ledger.claim('run', fired.id, owner, now)) return null;
    return { item, run: fired, spec: runSpec(ctx.opts.dataDir, fired, item.def), queue: 'run', key: fired.id };
  } else run = item.run;
  if (!ctx.store.ledger.claim('run', run.id, owner, now)) return null;
  const runDir = run.runDir ?? runDirFor(ctx.opts.dataDir, run.id, run.createdAt);
  if (item.kind === 'run' && !item.recovering) {
    if (!moveRun(ctx.store, run.id, run.kind, 'launch', { runDir, backend: item.backend, reason: null })) {
      ctx.store.ledger.release('run', run.id);
      return null;
    }
  } else if (item.kind === 'run') {
    ctx.store.runs.cas(run.id, ['STARTING'], 'STARTING', { runDir, backend: item.backend });
  }
  const def = item.def;
  return { item, run: { ...run, runDir }, spec: runSpec(ctx.opts.dataDir, { ...run, runDir }, def), queue: 'run', key: run.id };
}

/**
 * Record launch answers, inside the caller's transaction. The runs launched (most answers) are
 * released and entered in the ledger together, and their statuses read together: three statements
 * a run were most of what recording a pass's launches cost. The rest one by one. Told in the order
 * answered.
 */
function recordAll(ctx: Ctx, answers: readonly Answer[], now: number, claimedAt: string | null = null): void {
  const launched = answers.filter((a) => a.c.queue === 'run' && a.handle);
  // Nothing written since the claims committed (`claimedAt`, their change mark): every run claimed
  // is still STARTING, as claimed, and is not read back.
  const asClaimed = claimedAt === ctx.store.changeMark();
  ctx.store.ledger.recordRuns(
    launched.map((a) => ({ runId: a.c.key, backend: a.c.item.backend, handle: a.handle! })),
    now,
  );
  const statuses = asClaimed ? null : ctx.store.runs.statuses(launched.map((a) => a.c.key));
  for (const a of answers) {
    if (a.c.queue === 'run' && a.handle) launchedRun(ctx, a.c, a.handle, statuses ? (statuses.get(a.c.key) ?? null) : LAUNCHED);
    else record(ctx, a.c, a.handle, a.error, now);
  }
}

/** Record a job's launch answer, or a run's launch that failed. */
function record(ctx: Ctx, c: Claimed, handle: Handle | undefined, error: string | undefined, now: number): void {
  ctx.store.ledger.release(c.queue, c.key);
  const backendName = c.item.backend;
  // A backend that answered with no handle and no error failed all the same.
  const reason = error ?? 'launch failed';
  if (c.queue === 'job') {
    const id = Number(c.key);
    if (handle) {
      ctx.store.ledger.record('job', c.key, backendName, handle, now);
      ctx.events.log({ type: 'job:submitted', jobId: id, message: `job ${id} submitted to ${backendName}` });
      // Cancelled while we were submitting: the cancel found nothing in the ledger to stop, so stop it here.
      if (ctx.store.jobs.status(id) === 'CANCEL') stopLater(ctx, `job ${id}`, backendName, handle);
    } else if (moveJob(ctx.store, id, 'launch_failed', { reason, endedAt: now }, now)) {
      ctx.events.log({ type: 'job:launch-failed', jobId: id, message: `job ${id} could not start: ${reason}` });
    }
    return;
  }
  // A run launched is recorded with the others (recordAll): here, one that could not be.
  const run = c.run!;
  const refused = reason.startsWith('LAUNCH_REFUSED');
  const to = moveRun(ctx.store, run.id, run.kind, 'launch_failed', { reason, endedAt: now });
  if (!to) return;
  ctx.events.log({
    type: refused ? 'run:refused' : 'run:launch-failed',
    routineId: run.routineId,
    runId: run.id,
    message: refused ? reason : `could not start: ${reason}`,
  });
  if (run.kind === 'batch') finalizeBatch(ctx.store, (e) => ctx.events.log(e), run, ctx.defs.byId.get(run.routineId) ?? null, false, reason, now);
}

/** A run launched and in the ledger; `current`: its status as recorded. */
function launchedRun(ctx: Ctx, c: Claimed, handle: Handle, current: RunStatus | null): void {
  const run = c.run!;
  const backendName = c.item.backend;
  if (current && current !== 'STARTING' && current !== 'RUNNING') {
    // Stopped while we were submitting: keep it in the ledger so the check phase settles it.
    stopLater(ctx, run.id, backendName, handle);
  }
  ctx.events.log({ type: 'run:submitted', routineId: run.routineId, runId: run.id, message: `submitted to ${backendName} (attempt ${run.attempt})` });
}

/**
 * Stop what was launched for nothing, held in `stopping` under `key` so that the engine's stop
 * waits for it. Nothing else is stopping it: the cancel found no handle to stop, and the run's
 * ledger entry (which a stop by the check phase needs) is the one just recorded. The backend is
 * there: the health gate asked it before the claim.
 */
function stopLater(ctx: Ctx, key: string, name: string, handle: Handle): void {
  const p = ctx.backends
    .get(name)!
    .cancel(handle, ctx.opts.killGraceMs)
    .catch(() => undefined)
    .finally(() => ctx.launches.stopping.delete(key));
  ctx.launches.stopping.set(key, p);
}
