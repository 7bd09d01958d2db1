// 1,000 no-op one-off batch jobs (`/bin/true`) through the whole local protocol at max_parallel 8:
// a real Engine (SQLite file, local backend, job directories, wrapper, exit-code sentinel,
// check/settle), its timed pass only every second, so throughput rests on the exit nudges. Next
// to it, in the same run, a bare `child_process.spawn('/bin/true')` loop at the same parallelism.
// Rounds are interleaved (bare, engine, bare, engine, bare) and medians compared, with the load
// average recorded: on a shared machine one pair of runs alone can swing the ratio a lot.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { buildEngine } from '../main/engine/host/build-engine.js';
import { postJob } from '../main/engine/ops/jobs.js';
import { median, round } from './stats.js';
import { bareSpawnCleanProcess, daemonJobs, type DaemonRound } from './jobs-daemon.js';

const PARALLEL = 8;

/** Jobs per second of a bare spawn loop keeping `parallel` `/bin/true` in flight. */
export async function bareSpawn(total: number, parallel: number): Promise<number> {
  const started = performance.now();
  let launched = 0;
  await new Promise<void>((resolve, reject) => {
    let done = 0;
    const next = () => {
      if (launched >= total) return;
      launched++;
      const child = spawn('/bin/true', [], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', () => {
        done++;
        if (done === total) resolve();
        else next();
      });
    };
    for (let i = 0; i < parallel; i++) next();
  });
  return total / ((performance.now() - started) / 1000);
}

export interface EngineRound {
  jobsPerSec: number;
  passes: number;
  failed: number;
  /** Share of the run the daemon's main thread was busy. */
  eventLoopUtilization: number;
  /** CPU time of the daemon process (all threads) per job. */
  daemonCpuMsPerJob: number;
  passMedianMs: number;
}

/** Jobs per second through the engine: all posted, then from the first pass to the last COMPLETED. */
export async function engineJobs(total: number, parallel: number): Promise<EngineRound> {
  const dir = mkdtempSync(join(os.tmpdir(), 'tend-bench-jobs-'));
  const engine = buildEngine({ dataDir: dir, intervalMs: 1000, options: { maxParallel: parallel, killGraceMs: 1000 } });
  try {
    const now = Date.now();
    engine.store.tx(() => {
      for (let i = 0; i < total; i++) postJob(engine.store, { command: '/bin/true', name: `noop ${i}` }, now);
    });
    let completed = 0;
    let failed = 0;
    let passes = 0;
    const times: number[] = [];
    const finished = new Promise<void>((resolve) => {
      engine.bus.on('event', (e) => {
        if (e.type === 'job:completed') completed++;
        else if (e.type === 'job:failed' || e.type === 'job:launch-failed') failed++;
        else return;
        if (completed + failed === total) resolve();
      });
    });
    engine.bus.on('pass', (p) => {
      passes++;
      times.push(p.durationMs);
    });
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    engine.start();
    await finished;
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      jobsPerSec: round(total / seconds, 1),
      passes,
      failed,
      eventLoopUtilization: round(performance.eventLoopUtilization(elu0).utilization, 2),
      daemonCpuMsPerJob: round((cpu.user + cpu.system) / 1000 / total, 2),
      passMedianMs: round(median(times)),
    };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchJobs() {
  const total = Number(process.env.TEND_BENCH_JOBS ?? 1000);
  const rounds = Number(process.env.TEND_BENCH_ROUNDS ?? 2);
  const bare: number[] = [];
  const engine: EngineRound[] = [];
  const load: number[] = [os.loadavg()[0]!];
  bare.push(await bareSpawn(total, PARALLEL));
  for (let r = 0; r < rounds; r++) {
    engine.push(await engineJobs(total, PARALLEL));
    bare.push(await bareSpawn(total, PARALLEL));
    load.push(os.loadavg()[0]!);
  }
  const enginePerSec = median(engine.map((e) => e.jobsPerSec));
  const barePerSec = median(bare);

  // What users see: a real daemon process against a bare loop in a clean process, interleaved.
  const dTotal = Number(process.env.TEND_BENCH_DAEMON_JOBS ?? 300);
  const dRounds = Number(process.env.TEND_BENCH_DAEMON_ROUNDS ?? 3);
  const cleanBare: number[] = [await bareSpawnCleanProcess(dTotal, PARALLEL)];
  const daemon: DaemonRound[] = [];
  const dLoad: number[] = [os.loadavg()[0]!];
  for (let r = 0; r < dRounds; r++) {
    daemon.push(await daemonJobs(dTotal, PARALLEL));
    cleanBare.push(await bareSpawnCleanProcess(dTotal, PARALLEL));
    dLoad.push(os.loadavg()[0]!);
  }
  const daemonPerSec = median(daemon.map((d) => d.jobsPerSec));
  const cleanBarePerSec = median(cleanBare);
  return {
    name: 'jobs',
    description: `${total} one-off batch jobs (/bin/true) through the whole local protocol at max_parallel ${PARALLEL} (pass interval 1 s: exit nudges drive it), vs a bare spawn loop at the same parallelism; interleaved rounds, medians. daemon: ${dTotal} jobs drained by a real \`tend daemon run\` vs a bare loop in its own clean process. A job's waiter creates six files in its directory: where file creation is slow (daemon.rounds[].fileCreateCpuMicros) that cost is most of a job; TMPDIR=/dev/shm puts the data dir on tmpfs`,
    jobs: total,
    parallel: PARALLEL,
    engineJobsPerSec: round(enginePerSec, 1),
    bareSpawnPerSec: round(barePerSec, 1),
    ratio: round(enginePerSec / barePerSec, 3),
    rounds: { engine, bareSpawnPerSec: bare.map((b) => round(b, 1)) },
    loadAverage1m: load.map((l) => round(l, 2)),
    daemon: {
      jobs: dTotal,
      daemonJobsPerSec: round(daemonPerSec, 1),
      cleanBareSpawnPerSec: round(cleanBarePerSec, 1),
      ratio: round(daemonPerSec / cleanBarePerSec, 3),
      rounds: { daemon, cleanBareSpawnPerSec: cleanBare.map((b) => round(b, 1)) },
      loadAverage1m: dLoad.map((l) => round(l, 2)),
    },
    cpus: os.cpus().length,
    targets: { ratio: 0.5, daemonRatio: 0.45 },
  };
}
