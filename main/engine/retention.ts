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

  /** Sweep when one is due (right after start, then every `everyMs`, or at once while there is more). */
  async maybeSweep(): Promise<SweepReport | null> {
    if (this.o.keepDays === null) return null;
    const now = this.clock.now();
    if (now < this.nextAt) return null;
    // Set before sweeping: a sweep that throws is tried again after the interval, not every pass.
    this.nextAt = now + (this.o.everyMs ?? 10 * 60_000);
    const report = await this.sweep(now);
    if (report.more) this.nextAt = now;
    return report;
  }

  async sweep(now = this.clock.now()): Promise<SweepReport> {
    const keepDays = this.o.keepDays ?? Infinity;
    const cutoff = now - keepDays * DAY_MS;
    const batch = this.o.batch ?? 200;
    const max = this.o.maxPerSweep ?? 5000;
    const r: SweepReport = { at: now, cutoff, runs: 0, jobs: 0, events: 0, commands: 0, reports: 0, dirs: 0, more: false };
    const dirs: string[] = [];

    // Runs (the metrics counted them as they finished).
    for (let done = false; !done && r.runs < max; ) {
      const runs = this.store.history.oldRuns(cutoff, Math.min(batch, max - r.runs));
      if (runs.length === 0) break;
      this.store.tx(() => this.store.history.removeRuns(runs));
      r.runs += runs.length;
      for (const x of runs) if (LOCAL_DIRS.has(x.backend) && x.runDir) dirs.push(x.runDir);
      done = runs.length < batch;
      await yieldToLoop();
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
      for (const j of removed) if (LOCAL_DIRS.has(j.backend) && j.runDir) dirs.push(j.runDir);
      skipped = jobs.length - removed.length;
      done = jobs.length < limit;
      await yieldToLoop();
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
        await yieldToLoop();
      }
      if (r[key] >= max) r.more = true;
    }

    r.dirs = this.removeDirs(dirs);
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

  /** Only directories inside this data dir's runs dir; a day directory left empty goes too. */
  private removeDirs(dirs: string[]): number {
    let n = 0;
    const days = new Set<string>();
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
    for (const day of days) {
      try {
        if (readdirSync(day).length === 0) rmdirSync(day);
      } catch {
        // Another job wrote into it meanwhile, or it is gone already.
      }
    }
    return n;
  }
}

function yieldToLoop(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
