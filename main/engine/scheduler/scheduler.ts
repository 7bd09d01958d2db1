// The pass of DESIGN.md: one thread, never throws. A fault becomes state on a routine, a job or a
// paused backend — never a crashed loop.
import type { Backend } from '../backend.js';
import type { Clock } from '../clock.js';
import type { JobRow, RunRow } from '../domain/types.js';
import { errorMessage } from '../errors.js';
import type { Store } from '../store/store.js';
import { check } from './check.js';
import { Ctx, type PassReport, type SchedulerHooks, type SchedulerOptions } from './context.js';
import { moveJob } from './moves.js';
import { promoteJobs } from './promote.js';
import { claim, launch, submit, type Claimed } from './submit.js';
import { enforceLimits, markLate, realtimeDue, reapOrphans } from './supervise.js';
import { workerOnline } from '../domain/online.js';

export class Scheduler {
  readonly ctx: Ctx;
  private waiting = new Map<string, string>();
  private running = false;
  /** A micro-pass in progress (a full pass waits for it). */
  private micro: Promise<boolean> | null = null;
  private last: { wall: number; mono: number } | null = null;
  /**
   * The unfinished runs as the last pass's fire step had them, and the change mark they are
   * current at. A pass that finds the mark unchanged (nothing written since, here or by another
   * process) uses them rather than reading every unfinished run again: with a thousand runs
   * waiting, an idle daemon's passes read megabytes a second for nothing.
   */
  private lastRead: { active: RunRow[]; mark: string } | null = null;

  constructor(store: Store, clock: Clock, backends: Map<string, Backend>, opts: SchedulerOptions, hooks: SchedulerHooks = {}) {
    this.ctx = new Ctx(store, clock, backends, opts, hooks);
  }

  get bus() {
    return this.ctx.events.bus;
  }

  /** Why each waiting run or realtime routine has not started, as of the last pass. */
  waitReasons(): ReadonlyMap<string, string> {
    return this.waiting;
  }

  async pass(): Promise<PassReport> {
    while (this.micro) await this.micro;
    if (this.running) throw new Error('passes never overlap');
    this.running = true;
    const ctx = this.ctx;
    const now = ctx.clock.now();
    const t0 = performance.now();
    const report: PassReport = { at: now, durationMs: 0, fired: 0, submitted: 0, settled: 0, faults: 0, steps: {} };
    const step = async (name: string, fn: () => unknown): Promise<void> => {
      const started = performance.now();
      try {
        await fn();
        report.steps[name] = performance.now() - started;
      } catch (err) {
        report.faults++;
        try {
          ctx.events.log({ type: 'pass:fault', message: `${name}: ${errorMessage(err)}` });
        } catch {
          /* the store itself is failing; the next pass tries again */
        }
      }
    };
    try {
      await step('clock', () => this.noticeClockJump(now));
      await step('refresh', () => ctx.defs.refresh(ctx.store));
      await step('leases', () => this.releaseStaleLeases(now));
      await step('check', async () => (report.settled = await check(ctx, now)));
      // The unfinished runs as the status step read them, and the database's change mark then.
      let read: { active: RunRow[]; mark: string } | null = null;
      await step('status', () => {
        // A mark taken before a read may be older than what was read, never newer: at worst a
        // later step reads again for nothing.
        let mark = ctx.store.changeMark();
        let active = this.lastRead?.mark === mark ? this.lastRead.active : ctx.store.runs.active();
        // Read again only if some were stopped: with thousands in flight each read is milliseconds.
        if (reapOrphans(ctx, active, now) > 0) {
          mark = ctx.store.changeMark();
          active = ctx.store.runs.active();
        }
        read = { active, mark };
        markLate(ctx, active, this.waiting, now);
        enforceLimits(ctx, active, now);
      });
      await step('promote', () => promoteJobs(ctx, now));
      // Fire and claim in one transaction, after the health gate; then launch what was claimed.
      let claimed: Claimed[] = [];
      let claimedAt: string | null = null;
      await step('fire', async () => {
        const waiting = new Map<string, string>();
        // Read again only if anything was written since the status step read them (by this
        // process or another): 2,000 runs in flight, a read was a fifth of the pass.
        const mark = ctx.store.changeMark();
        const active = read && read.mark === mark ? read.active : ctx.store.runs.active();
        const realtime = realtimeDue(ctx, new Set(active.map((r) => r.routineId)), waiting, now);
        const jobs = pendingJobs(ctx);
        // The mark `active` is current at: firing's overlap checks read it if nothing moves it meanwhile.
        const claims = await claim(ctx, now, { active, realtime, jobs, waiting }, true, mark);
        this.lastRead = { active, mark };
        this.waiting = waiting;
        report.fired = claims.fired;
        claimed = claims.claimed;
        claimedAt = claims.mark;
        // Firing could not read the due triggers: a fault of this step; what it claimed is launched.
        if (claims.fault !== null) throw claims.fault;
      });
      await step('submit', async () => (report.submitted = await launch(ctx, claimed, claimedAt)));
    } finally {
      report.durationMs = performance.now() - t0;
      this.running = false;
    }
    ctx.events.bus.emit('pass', report);
    return report;
  }

  /**
   * A job this process launched has exited (its waiter is gone): settle that run and, for a
   * realtime routine, start its replacement now, under the same backoff and crash-loop rules as a
   * pass, rather than after a whole pass. Returns false when it did not (a pass is running, the
   * run is not in the ledger, or not a realtime one): the caller nudges a full pass instead.
   */
  settleExited(runId: string): Promise<boolean> {
    if (this.running || this.micro) return Promise.resolve(false);
    const micro = this.microPass(runId).finally(() => {
      this.micro = null;
    });
    this.micro = micro;
    return micro;
  }

  /** Resolves once no micro-pass is running. */
  async quiesce(): Promise<void> {
    while (this.micro) await this.micro;
  }

  private async microPass(runId: string): Promise<boolean> {
    const ctx = this.ctx;
    try {
      // Not in the ledger (settled already, or never recorded): check settles nothing, and says so.
      const run = ctx.store.runs.get(runId);
      if (run?.kind !== 'realtime') return false;
      const now = ctx.clock.now();
      if ((await check(ctx, now, new Set([`run:${runId}`]))) === 0) return false;
      const inLedger = new Set(ctx.store.ledger.keys().map((e) => `${e.kind}:${e.refId}`));
      const unfinished = ctx.store.runs.active();
      // What holds slots and schedules; nothing else is picked up here (PENDING runs, jobs: the pass).
      const active = unfinished.filter((r) => r.status === 'RUNNING' || (r.status === 'STARTING' && inLedger.has(`run:${r.id}`)));
      const waiting = new Map<string, string>();
      // A PENDING run is the routine's next instance all the same (restart's, asked by hand): the
      // pass starts it, and starting another here would run the routine twice.
      const realtime = realtimeDue(ctx, new Set(unfinished.map((r) => r.routineId)), waiting, now, run.routineId);
      await submit(ctx, now, { active, realtime, jobs: [], waiting });
      return true;
    } catch (err) {
      try {
        ctx.events.log({ type: 'pass:fault', runId, message: `micro-pass: ${errorMessage(err)}` });
      } catch {
        /* the store itself is failing; the next pass tries again */
      }
      return false;
    }
  }

  /** Suspend, resume or a clock change: wall time moved far more than monotonic time did. */
  private noticeClockJump(now: number): void {
    const mono = performance.now();
    const last = this.last;
    this.last = { wall: now, mono };
    const threshold = this.ctx.opts.clockJumpMs;
    if (!last || threshold === undefined) return;
    const drift = now - last.wall - (mono - last.mono);
    if (Math.abs(drift) < threshold) return;
    this.ctx.events.log({
      type: 'clock:jump',
      message: `${drift > 0 ? 'wall clock jumped ahead' : 'wall clock went back'} by ${Math.round(Math.abs(drift) / 1000)}s (sleep, resume or clock change): misfire policies apply to what was due`,
      data: { driftMs: Math.round(drift) },
    });
  }

  private releaseStaleLeases(now: number): void {
    // Claims whose time is up, and claims of a scheduler process on this host that is gone (a
    // daemon killed between claim and ledger write): those need not wait out the timeout.
    const stale = this.ctx.store.ledger
      .staleLeases(Number.MAX_SAFE_INTEGER)
      .filter((l) => !this.ctx.launches.launching.has(`${l.queue}:${l.itemId}`)) // our own launch, still in flight
      .filter((l) => l.claimedAt < now - this.ctx.opts.leaseTimeoutMs || deadLocalOwner(l.owner))
      // A worker host that is away may be running what it claimed: its claims wait for it to come
      // back and report (a missing host is not a statement about the work, and a launch elsewhere
      // would run it twice).
      .filter((l) => !workerAway(this.ctx.store, l.owner, now, this.ctx.opts.workerOfflineMs));
    if (stale.length === 0) return;
    this.ctx.events.tx(() => {
      for (const l of stale) {
        this.ctx.store.ledger.release(l.queue, l.itemId);
        if (l.queue === 'job') {
          const id = Number(l.itemId);
          // FETCHED and never recorded: back to its queue; resubmission finds its directory.
          moveJob(this.ctx.store, id, 'release', {}, now);
        }
        this.ctx.events.log({
          type: 'lease:released',
          runId: l.queue === 'run' ? l.itemId : null,
          jobId: l.queue === 'job' ? Number(l.itemId) : null,
          message: `stale claim by ${l.owner} from ${new Date(l.claimedAt).toISOString()} released`,
        });
      }
    });
  }
}

/**
 * The PENDING jobs this pass may launch: none without a free slot, else the oldest this host may
 * run, a few more than the free slots (one may be claimed by a worker meanwhile). A queue of
 * thousands is not read and parsed again on every pass (every exit nudges one). This only bounds
 * what is read: submit decides what fits, counting launches in flight too.
 */
function pendingJobs(ctx: Ctx): JobRow[] {
  const ledger = ctx.store.ledger.keys();
  const jobsInFlight = ledger.filter((e) => e.kind === 'job').length;
  const slots = Math.min(ctx.opts.maxParallel - ledger.length, (ctx.opts.batchSlots ?? ctx.opts.maxParallel) - jobsInFlight);
  if (slots <= 0) return [];
  return ctx.store.jobs.runnable(ctx.opts.computer, slots + 8);
}

/** Lease owners `user@HOST` are remote workers (pool routes); away = not heard from lately. */
function workerAway(store: Store, owner: string, now: number, offlineMs: number): boolean {
  const w = store.pool.worker(owner);
  return w !== null && !workerOnline(w.lastSeen, now, offlineMs);
}

/** Lease owners `pid:<pid>:<nonce>` are scheduler processes of this host (see Engine); this process is alive. */
function deadLocalOwner(owner: string): boolean {
  const m = /^pid:(\d+):/.exec(owner);
  if (!m) return false;
  const pid = Number(m[1]);
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
