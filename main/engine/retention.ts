// History retention. A routine every 10 s makes 8,640 runs, their events and 8,640 job
// directories a day: without a limit the database and the runs dir grow until the disk is full
// and every query slows. Finished work older than the kept days is removed in small transactions
// between passes (the latest run of each routine and any job still named as a dependency stay);
// the directories of removed local and Slurm work go with them. Work that ran on another host has
// its directory there: that worker removes it (worker/remote/prune.ts).
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Clock } from './clock.js';
import { DAY_MS } from './keep-days.js';
import { paths } from './datadir.js';
import type { NewEvent } from './store/events.js';
import type { Store } from './store/store.js';

export interface RetentionOptions {
  /** Days of finished history to keep; null keeps everything. */
  keepDays: number | null;
  /** Rows per transaction (each is short, so passes and API calls are never held up for long). */
  batch?: number;
  /** At most this many rows of each kind per sweep; the rest is left for the next pass. */
  maxPerSweep?: number;
  /** Time between sweeps once a sweep found nothing more to remove. */
  everyMs?: number;
}

export interface SweepReport {
  at: number;
  cutoff: number;
  runs: number;
  jobs: number;
  events: number;
  commands: number;
  reports: number;
  dirs: number;
  /** Stopped at maxPerSweep: the next pass sweeps again. */
  more: boolean;
}

const LOCAL_DIRS = new Set([null, 'local', 'slurm']);

export class Retention {
  last: SweepReport | null = null;
  private nextAt = -Infinity;
  private readonly runsRoot: string;

  constructor(
    private readonly store: Store,
    dataDir: string,
    private readonly clock: Clock,
    readonly o: RetentionOptions,
    private readonly log: (e: NewEvent) => void = () => {},
  ) {
    this.runsRoot = resolve(paths(dataDir).runs);
  }

  /** The sweep under way, a slice at a time (null between sweeps). */
  private current: AsyncGenerator<void, SweepReport> | null = null;

  /**
   * One slice of the history sweep: a single short transaction (or the directories it freed).
   * Starts a sweep when one is due (right after start, then every `everyMs`, or at once while the
   * last one stopped at its limit). True while this sweep has more slices: the daemon's loop runs
   * them between passes, and a pass that is asked for goes before the next slice.
   */
  async step(): Promise<boolean> {
    if (!this.current) {
      if (this.o.keepDays === null) return false;
      const now = this.clock.now();
      if (now < this.nextAt) return false;
      // Set before sweeping: a sweep that throws is tried again after the interval, not every pass.
      this.nextAt = now + (this.o.everyMs ?? 10 * 60_000);
      this.current = this.slices(now);
    }
    let next: IteratorResult<void, SweepReport>;
    try {
      next = await this.current.next();
    } catch (err) {
      this.current = null;
      throw err;
    }
    if (!next.done) {
      await yieldToLoop();
      return true;
    }
    this.current = null;
    if (next.value.more) this.nextAt = next.value.at;
    return false;
  }

  /** A whole sweep when one is due (its slices one after another); null when none is. */
  async maybeSweep(): Promise<SweepReport | null> {
    const before = this.last;
    while (await this.step());
    return this.last !== before ? this.last : null;
  }

  /** A whole sweep now, its slices one after another. */
  async sweep(now = this.clock.now()): Promise<SweepReport> {
    const slices = this.slices(now);
    for (;;) {
      const next = await slices.next();
      if (next.done) return next.value;
      await yieldToLoop();
    }
  }

  /** The sweep as slices: yields after each transaction, returns the report. */
  private async *slices(now: number): AsyncGenerator<void, SweepReport> {
    const keepDays = this.o.keepDays ?? Infinity;
    const cutoff = now - keepDays * DAY_MS;
    const batch = this.o.batch ?? 200;
    const max = this.o.maxPerSweep ?? 5000;
    const r: SweepReport = { at: now, cutoff, runs: 0, jobs: 0, events: 0, commands: 0, reports: 0, dirs: 0, more: false };
    const days = new Set<string>();

    // Runs (the metrics counted them as they finished).
    for (let done = false; !done && r.runs < max; ) {
      const runs = this.store.history.oldRuns(cutoff, Math.min(batch, max - r.runs));
      if (runs.length === 0) break;
      this.store.tx(() => this.store.history.removeRuns(runs));
      r.runs += runs.length;
      r.dirs += this.removeDirs(runs.filter((x) => LOCAL_DIRS.has(x.backend) && x.runDir).map((x) => x.runDir!), days);
      done = runs.length < batch;
      yield;
    }
    if (r.runs >= max) r.more = true;

    // Jobs: newest first, so a dependent goes before what it depended on.
    // Jobs still named as a dependency are skipped; each batch reads past those skipped so far.
    let skipped = 0;
    for (let done = false; !done && r.jobs < max && skipped < max; ) {
      const limit = skipped + Math.min(batch, max - r.jobs);
      const jobs = this.store.history.oldJobs(cutoff, limit);
      const removed = this.store.tx(() => jobs.filter((j) => this.store.history.removeJob(j.id)));
      r.jobs += removed.length;
      r.dirs += this.removeDirs(removed.filter((j) => LOCAL_DIRS.has(j.backend) && j.runDir).map((j) => j.runDir!), days);
      skipped = jobs.length - removed.length;
      done = jobs.length < limit;
      yield;
    }
    if (r.jobs >= max) r.more = true;

    for (const [key, prune] of [
      ['events', (n: number) => this.store.history.pruneEvents(cutoff, n)],
      ['commands', (n: number) => this.store.history.pruneCommands(cutoff, n)],
      ['reports', (n: number) => this.store.history.pruneReports(cutoff, n)],
    ] as const) {
      for (;;) {
        const n = prune(Math.min(batch * 5, max - r[key]));
        r[key] += n;
        if (n === 0 || r[key] >= max) break;
        yield;
      }
      if (r[key] >= max) r.more = true;
    }

    this.store.tx(() => {
      this.store.history.pruneQuarters(cutoff);
      this.store.history.pruneCycles(cutoff);
    });
    removeEmptyDays(days);
    if (r.runs + r.jobs + r.events + r.commands + r.reports > 0) {
      this.log({
        type: 'history:pruned',
        message: `removed history older than ${this.o.keepDays} days: ${r.runs} runs, ${r.jobs} jobs, ${r.events} events, ${r.dirs} job directories${r.more ? ' (more next pass)' : ''}`,
        data: { ...r },
      });
    }
    this.last = r;
    return r;
  }

  /** Only directories inside this data dir's runs dir; their day directories are noted in `days`. */
  private removeDirs(dirs: string[], days: Set<string>): number {
    let n = 0;
    for (const d of dirs) {
      const abs = resolve(d);
      const rel = relative(this.runsRoot, abs);
      if (rel === '' || rel.startsWith('..') || rel.split(sep).length < 2) continue;
      try {
        rmSync(abs, { recursive: true, force: true });
        n++;
        days.add(dirname(abs));
      } catch {
        // A directory that cannot be removed now is left for the person (doctor shows disk use).
      }
    }
    return n;
  }
}

/** A day directory the sweep left empty goes too. */
function removeEmptyDays(days: Set<string>): void {
  for (const day of days) {
    try {
      if (readdirSync(day).length === 0) rmdirSync(day);
    } catch {
      // Another job wrote into it meanwhile, or it is gone already.
    }
  }
}

function yieldToLoop(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
