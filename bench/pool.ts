// One-off batch jobs (`/bin/true`) per second through the worker pool: three `tend worker`
// processes on loopback (each --batchjobs N, the daemon running none itself) versus the in-process
// worker (the daemon alone, TEND_BATCH_SLOTS = 3N), measured in the same run with real processes,
// real SQLite and real job directories. The pass runs only every 5 s, so throughput rests on the
// wake-ups (exit nudges, long polls answered at once), never on a poll interval.
// TEND_BENCH_POOL_JOBS (300), TEND_BENCH_POOL_SLOTS (N, 4), TEND_BENCH_POOL_ROUNDS (2).
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { postJob } from '../main/engine/ops/jobs.js';
import { Store } from '../main/engine/store/store.js';
import { median, round } from './stats.js';

const TEND = join(dirname(fileURLToPath(import.meta.url)), '..', 'main', 'cli', 'tend.js');
const WORKERS = 3;
const PASS_MS = 5000;

function env(dataDir: string, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_')) out[k] = v;
  return { ...out, TEND_DATA_DIR: dataDir, ...extra };
}

async function until<T>(fn: () => T, timeoutMs: number, what: string, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = fn();
      if (v) return v as NonNullable<T>;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`bench pool: timed out waiting for ${what}`);
    await delay(everyMs);
  }
}

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return null;
  }
}

interface Procs {
  all: ChildProcess[];
}

function start(procs: Procs, args: string[], e: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [TEND, ...args], { env: e, stdio: ['ignore', 'ignore', 'ignore'] });
  procs.all.push(child);
  return child;
}

async function stopAll(procs: Procs): Promise<void> {
  const exits = procs.all.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => new Promise<void>((r) => c.once('exit', () => r())));
  for (const c of procs.all) c.kill('SIGTERM');
  await Promise.race([Promise.all(exits), delay(15_000)]);
  for (const c of procs.all) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
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
  const root = mkdtempSync(join(os.tmpdir(), `tend-bench-pool-${mode}-`));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const procs: Procs = { all: [] };
  try {
    const batchSlots = mode === 'remote' ? 0 : slots * WORKERS;
    const daemon = start(procs, ['daemon', 'run', '--quiet'], env(dataDir, { TEND_DAEMON_INTERVAL_MS: String(PASS_MS), TEND_BATCH_SLOTS: String(batchSlots), TEND_MAX_PARALLEL: String(Math.max(8, batchSlots)) }));
    const api = await until(() => {
      const s = readJson<{ pid: number; lastPass: unknown }>(join(dataDir, 'daemon.state.json'));
      const a = readJson<{ url: string; pid: number }>(join(dataDir, 'api.json'));
      return s && s.pid === daemon.pid && s.lastPass !== null && a?.pid === daemon.pid ? a : null;
    }, 30_000, 'the daemon');

    const db = new Database(join(dataDir, 'tend.db'), { readonly: true, fileMustExist: true });
    try {
      if (mode === 'remote') {
        const since = Date.now();
        for (let i = 1; i <= WORKERS; i++) {
          const computer = `bench@w${i}`;
          const r = spawnSync(process.execPath, [TEND, 'worker', 'token', computer], { env: env(dataDir, {}), encoding: 'utf8' });
          if (r.status !== 0) throw new Error(`tend worker token: ${r.stderr}`);
          start(procs, ['worker', '--server', api.url, '--computer', computer, '--batchjobs', String(slots), '--data-dir', join(root, `w${i}`)], env(join(root, `w${i}`), { TEND_WORKER_TOKEN: r.stdout.trim() }));
        }
        const seen = db.prepare(`SELECT COUNT(*) FROM workers WHERE last_seen >= ?`).pluck();
        await until(() => Number(seen.get(since)) === WORKERS, 30_000, 'the workers to connect');
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
      process.kill(daemon.pid!, 'SIGUSR2');
      await until(() => Number(done.get()) === total, 600_000, `${total} jobs to end`, 5);
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
    await stopAll(procs);
    rmSync(root, { recursive: true, force: true });
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
