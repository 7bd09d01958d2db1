// One pass with 1,000 and 10,000 routines of which ~1% are due: the cost should follow the due
// work, not the total. Real SQLite file, the real Scheduler, the tests' backend double with jobs
// that finish the moment they are submitted (recording nothing, so it adds nothing to the pass).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { ManualClock } from '../main/engine/clock.js';
import { NO_OPTIMIZING_COMPILER } from '../main/engine/daemon/v8-flags.js';
import { importSchedule } from '../main/engine/ops/schedules.js';
import { Scheduler } from '../main/engine/scheduler/scheduler.js';
import { WalCheckpoints } from '../main/engine/store/checkpoint.js';
import { Store } from '../main/engine/store/store.js';
import { TestBackend } from '../test/helpers/test-backend.js';
import { median, percentile, round } from './stats.js';

/** What the measured passes ran: every statement, and those that write (INSERT, UPDATE, DELETE). */
interface Counted {
  on: boolean;
  statements: number;
  writes: number;
  /** Transactions committed (COMMIT statements). */
  commits: number;
  /** Passes counted. */
  passes: number;
  /** Runs submitted by the counted passes. */
  launched: number;
}

interface Options {
  /** Hear the statements of the passes after the first. */
  counted?: Counted;
  /** Routines started (and left running) before the measured passes: what in-flight work costs a pass. */
  running?: number;
}

export async function measure(total: number, due: number, passes: number, { counted, running = 0 }: Options = {}) {
  const dir = mkdtempSync(join(os.tmpdir(), 'tend-bench-pass-'));
  try {
    const trace = counted
      ? (sql: string) => {
          if (!counted.on) return;
          counted.statements++;
          if (/^\s*(INSERT|UPDATE|DELETE)\b/i.test(sql)) counted.writes++;
          else if (/^\s*COMMIT\b/i.test(sql)) counted.commits++;
        }
      : undefined;
    const store = Store.open(join(dir, 'tend.db'), { trace });
    const t0 = Date.parse('2026-06-01T10:00:00Z');
    const clock = new ManualClock(t0);
    const routines = Array.from({ length: total }, (_, i) => ({ id: `bench@host:r/${i}`, command: '/bin/true', cron: `${i % 60} ${i % 24} * * *`, tz: 'UTC' }));
    importSchedule(store, stringify({ schedule: 'bench', routines }), t0);
    const backend = new TestBackend('local', { clock, startAs: running ? 'running' : 'done', record: false });
    const scheduler = new Scheduler(store, clock, new Map([['local', backend]]), {
      maxParallel: 100_000,
      leaseTimeoutMs: 60_000,
      killGraceMs: 1000,
      misfireAfterMs: 3_600_000,
      misfireAllCap: 10,
      workerOfflineMs: 30_000,
      computer: 'bench@host',
      owner: 'bench',
      dataDir: dir,
    });
    const makeDue = store.db.prepare(`UPDATE triggers SET next_run_at = ? WHERE routine_id = ?`);
    // As the daemon's engine does: the WAL is checkpointed between passes, never in one's commits.
    const checkpoints = new WalCheckpoints(store.db);
    checkpoints.own();
    const times: number[] = [];
    // CPU time of the process during each pass: on a loaded machine, steadier than wall time (it
    // leaves out the time the pass waited for a core), though not free of the load (caches).
    const cpuTimes: number[] = [];
    // The main thread's alone (where the pass runs): the process's also counts V8's helper threads
    // (the optimizing compiler's, the GC's), which run beside the pass and can put it above wall time.
    const mainTimes: number[] = [];
    const steps: Record<string, number[]> = {};
    await scheduler.pass(); // warm: definitions cached, statements prepared
    if (running) {
      store.tx(() => {
        for (let k = 0; k < running; k++) makeDue.run(clock.now() - 10, `bench@host:r/${k}`);
      });
      await scheduler.pass(); // started
      clock.advance(1000);
      await scheduler.pass(); // seen running
    }
    let launchedBefore = backend.launches();
    for (let p = 0; p < passes; p++) {
      // Counted from the second pass on: the first has nothing submitted before it to settle.
      if (p === 1) launchedBefore = backend.launches();
      clock.advance(1000);
      const now = clock.now();
      store.tx(() => {
        for (let k = 0; k < due; k++) makeDue.run(now - 10, `bench@host:r/${(running + p * due + k) % total}`);
      });
      if (counted) counted.on = p > 0;
      if (counted?.on) counted.passes++;
      const main = mainThreadCpuMs();
      const started = performance.now();
      const cpu = process.cpuUsage();
      const report = await scheduler.pass();
      times.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      cpuTimes.push((used.user + used.system) / 1000);
      if (main !== null) mainTimes.push(mainThreadCpuMs()! - main);
      if (counted) counted.on = false;
      checkpoints.step();
      for (const [k, v] of Object.entries(report.steps)) (steps[k] ??= []).push(v);
    }
    if (counted) counted.launched = backend.launches() - launchedBefore;
    checkpoints.release();
    store.close();
    return { routines: total, duePerPass: due, ...(running ? { running } : {}), passes, medianMs: round(median(times)), p90Ms: round(percentile(times, 90)), cpuMedianMs: round(median(cpuTimes)),
      ...(mainTimes.length ? { mainThreadCpuMedianMs: round(median(mainTimes)) } : {}), submitted: backend.launches(),
      stepMedianMs: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, round(median(v))])) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchPass() {
  const passes = 40;
  const small = await measure(1000, 10, passes);
  const large = await measure(10_000, 100, passes);
  // Same due work at both sizes: isolates the cost of idle routines.
  const largeSameDue = await measure(10_000, 10, passes);
  // Statements per run submitted, counted in passes of their own (hearing each statement costs time).
  const counted: Counted = { on: false, statements: 0, writes: 0, commits: 0, passes: 0, launched: 0 };
  await measure(10_000, 100, 10, { counted });
  // The same due work with 2,000 jobs running: each pass polls them all.
  const largeRunning = await measure(10_000, 10, passes, { running: 2000 });
  // The same 2,000 running and nothing due: an idle daemon's pass, which reads no run it read before.
  const largeRunningIdle = await measure(10_000, 0, passes, { running: 2000 });
  // The daemon runs without V8's optimizing compiler (engine/daemon/v8-flags.ts): the same 10k/100
  // pass in a process started with those flags is what a daemon's pass costs.
  const largeDaemonFlags = inChild(NO_OPTIMIZING_COMPILER, 10_000, 100, passes);
  return {
    name: 'pass',
    description: 'one scheduler pass (check, status, fire, submit) with ~1% of routines due; median of repeated passes',
    small,
    large,
    largeSameDue,
    largeRunning,
    largeRunningIdle,
    largeDaemonFlags,
    ratio10kTo1k: round(large.medianMs / small.medianMs, 2),
    ratio10kTo1kSameDue: round(largeSameDue.medianMs / small.medianMs, 2),
    // Every statement of the pass (BEGIN, SAVEPOINT and COMMIT included) over the runs it submitted, at 10k/100 due.
    perRunSubmitted: { statements: round(counted.statements / counted.launched, 2), writes: round(counted.writes / counted.launched, 2) },
    // Each commit writes the pages its transaction changed to the WAL: settle, fire and claim, record.
    commitsPerPass: round(counted.commits / counted.passes, 2),
    targets: { medianMs10k: 5, ratio: 2 },
  };
}

/** CPU time of the calling thread so far (Linux: /proc/thread-self/schedstat, in ns), or null elsewhere. */
function mainThreadCpuMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'pass-child.js');

function inChild(flags: string[], total: number, due: number, passes: number): Awaited<ReturnType<typeof measure>> & { v8Flags: string[] } {
  const out = execFileSync(process.execPath, [...flags, CHILD, String(total), String(due), String(passes)], { encoding: 'utf8' });
  return { v8Flags: flags, ...(JSON.parse(out) as Awaited<ReturnType<typeof measure>>) };
}
