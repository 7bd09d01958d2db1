// One-off batch jobs (`/bin/true`) per second through the worker pool: three `tend worker`
// processes on loopback (each --batchjobs N, the daemon running none itself) versus the in-process
// worker (the daemon alone, TEND_BATCH_SLOTS = 3N), measured in the same run with real processes,
// real SQLite and real job directories. The pass runs only every 5 s, so throughput rests on the
// wake-ups (exit nudges, long polls answered at once), never on a poll interval.
// TEND_BENCH_POOL_JOBS (300), TEND_BENCH_POOL_SLOTS (N, 4), TEND_BENCH_POOL_ROUNDS (2).
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { postJob } from '../main/engine/ops/jobs.js';
import { Store } from '../main/engine/store/store.js';
import { killTracked, scratch, tendOk } from '../test/helpers/cli.js';
import { Daemon } from '../test/helpers/daemon.js';
import { waitFor, within } from '../test/helpers/wait.js';
import { Worker } from '../test/helpers/worker.js';
import { median, round } from './stats.js';

const WORKERS = 3;
const PASS_MS = 5000;

/** SIGTERM the workers and the daemon and wait for them; whatever lingers past 15 s is killed. */
async function stopAll(daemon: Daemon, workers: Worker[]): Promise<void> {
  await Promise.all([within(Promise.all(workers.map((w) => w.kill('SIGTERM'))), 15_000, 'the workers to exit').catch(() => undefined), daemon.stop().catch(() => undefined)]);
  await killTracked();
}

interface Result {
  jobsPerSec: number;
  seconds: number;
  completed: number;
  failed: number;
  /** Jobs each worker (or the daemon) ran. */
  ranBy: Record<string, number>;
}

/** A daemon (and `workers` workers with `slots` each, if any); `total` jobs; seconds to the last one's end. */
async function measure(total: number, mode: 'remote' | 'in-process', slots: number): Promise<Result> {
  const box = scratch(`tend-bench-pool-${mode}-`);
  const root = box.dir;
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const batchSlots = mode === 'remote' ? 0 : slots * WORKERS;
  const daemon = new Daemon(dataDir, { TEND_DAEMON_INTERVAL_MS: String(PASS_MS), TEND_BATCH_SLOTS: String(batchSlots), TEND_MAX_PARALLEL: String(Math.max(8, batchSlots)) }, ['--quiet']);
  const workers: Worker[] = [];
  try {
    await daemon.ready();
    const api = await daemon.serving();

    const db = new Database(join(dataDir, 'tend.db'), { readonly: true, fileMustExist: true });
    try {
      if (mode === 'remote') {
        const since = Date.now();
        for (let i = 1; i <= WORKERS; i++) {
          const computer = `bench@w${i}`;
          const token = tendOk<string>(dataDir, ['worker', 'token', computer]).trim();
          workers.push(new Worker(computer, join(root, `w${i}`), () => api.url, token, slots).start());
        }
        const seen = db.prepare(`SELECT COUNT(*) FROM workers WHERE last_seen >= ?`).pluck();
        await waitFor(() => Number(seen.get(since)) === WORKERS, 30_000, 'the workers to connect');
        // Each worker waits in both long polls (commands and jobs) before the clock starts.
        await delay(500);
      }

      const done = db.prepare(`SELECT COUNT(*) FROM jobs WHERE status IN ('COMPLETED', 'ERROR', 'CANCEL')`).pluck();
      const t0 = performance.now();
      const store = Store.open(join(dataDir, 'tend.db'));
      try {
        const now = Date.now();
        store.tx(() => {
          for (let i = 0; i < total; i++) postJob(store, { command: '/bin/true', name: `noop ${i}` }, now);
        });
      } finally {
        store.close();
      }
      // What `tend job post` does: ask the daemon for a pass now.
      process.kill(daemon.pid, 'SIGUSR2');
      await waitFor(() => Number(done.get()) === total, 600_000, `${total} jobs to end`, 5);
      const seconds = (performance.now() - t0) / 1000;

      const rows = db.prepare(`SELECT status, COALESCE(fetched_by, 'daemon') AS who, COUNT(*) AS n FROM jobs GROUP BY status, who`).all() as { status: string; who: string; n: number }[];
      const ranBy: Record<string, number> = {};
      for (const r of rows) ranBy[r.who] = (ranBy[r.who] ?? 0) + r.n;
      const completed = rows.filter((r) => r.status === 'COMPLETED').reduce((a, r) => a + r.n, 0);
      return { jobsPerSec: round(total / seconds, 1), seconds: round(seconds, 2), completed, failed: total - completed, ranBy };
    } finally {
      db.close();
    }
  } finally {
    await stopAll(daemon, workers);
    box.remove();
  }
}

export async function benchPool() {
  const total = Number(process.env.TEND_BENCH_POOL_JOBS ?? 300);
  const slots = Number(process.env.TEND_BENCH_POOL_SLOTS ?? 4);
  const rounds = Math.max(1, Number(process.env.TEND_BENCH_POOL_ROUNDS ?? 2));
  // Interleaved (in-process, remote, in-process, …, in-process) so drift in the machine's load hits
  // both sides alike; the medians are compared.
  const inProcess: Result[] = [await measure(total, 'in-process', slots)];
  const remote: Result[] = [];
  for (let i = 0; i < rounds; i++) {
    remote.push(await measure(total, 'remote', slots));
    inProcess.push(await measure(total, 'in-process', slots));
  }
  const remotePerSec = median(remote.map((r) => r.jobsPerSec));
  const inProcessPerSec = median(inProcess.map((r) => r.jobsPerSec));
  return {
    name: 'pool',
    description: `${total} one-off batch jobs (/bin/true): ${WORKERS} tend worker processes on loopback with --batchjobs ${slots} each (daemon TEND_BATCH_SLOTS=0) vs the daemon's in-process worker with TEND_BATCH_SLOTS=${slots * WORKERS}; pass every ${PASS_MS / 1000} s, so wake-ups drive both; medians of interleaved runs`,
    jobs: total,
    workers: WORKERS,
    slotsPerWorker: slots,
    remote: { jobsPerSec: remotePerSec, runs: remote },
    inProcess: { jobsPerSec: inProcessPerSec, runs: inProcess },
    ratio: round(remotePerSec / inProcessPerSec, 3),
    loadAverage: os.loadavg().map((x) => round(x, 2)),
    targets: { ratio: 0.8 },
  };
}
