// No-op jobs drained by a real `tend daemon run` process (what a user runs), beside a bare spawn
// loop measured in a separate, clean Node process (not slowed by sharing this one). Jobs are
// posted into the data dir before the daemon starts; the drain runs from the first job's start
// (its waiter's `launched` file) to the moment the database shows every job COMPLETED.
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { postJob } from '../main/engine/ops/jobs.js';
import { Store } from '../main/engine/store/store.js';
import { paths } from '../main/engine/datadir.js';
import { scratch } from '../test/helpers/cli.js';
import { Daemon } from '../test/helpers/daemon.js';
import { round } from './stats.js';

const BARE = `
const { spawn } = require('node:child_process');
const [total, parallel] = process.argv.slice(1).map(Number);
const t0 = performance.now();
let launched = 0, done = 0;
const next = () => {
  if (launched >= total) return;
  launched++;
  spawn('/bin/true', [], { stdio: 'ignore' }).on('exit', () => {
    if (++done === total) process.stdout.write(String(total / ((performance.now() - t0) / 1000)));
    else next();
  });
};
for (let i = 0; i < parallel; i++) next();
`;

/** Jobs per second of a bare spawn loop in a fresh Node process. */
export function bareSpawnCleanProcess(total: number, parallel: number): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', BARE, String(total), String(parallel)], (err, stdout) => (err ? reject(err) : resolve(Number(stdout))));
  });
}

function earliestLaunch(dataDir: string): number {
  let first = Infinity;
  const runs = join(dataDir, 'runs');
  // Day directories only: runs/ also holds the waiters' copies (.waiters) and the health probe's file.
  for (const day of readdirSync(runs).filter((d) => !d.startsWith('.'))) {
    for (const run of readdirSync(join(runs, day))) {
      try {
        first = Math.min(first, statSync(join(runs, day, run, 'launched')).mtimeMs);
      } catch {
        // not launched
      }
    }
  }
  return first;
}

export interface DaemonRound {
  jobsPerSec: number;
  failed: number;
  /**
   * CPU of the daemon process per job (its own threads; waiters not included), from the first
   * job's end to the last's: its start (loading, opening the store, the first pass) is apart.
   */
  daemonCpuMsPerJob: number;
  /** CPU of the daemon until the first job ended (its start, mostly). */
  daemonStartCpuMs: number;
  /** The same as daemonCpuMsPerJob, of its main thread alone (the thread pool and V8's helpers apart). */
  daemonMainThreadMsPerJob: number;
  /** Passes the daemon ran, per job (its /metrics; its first, before any job ended, included). */
  passesPerJob: number;
  /** CPU of the batch waiters per job, with what they forked and reaped (setsid, the routine). */
  waitersCpuMsPerJob: number;
  /**
   * Read system calls of the batch waiters per job, with what they reaped (a count the machine's
   * load does not move: a shell's `read` builtin takes one per byte).
   */
  waiterReadCallsPerJob: number;
  /** CPU to create a file where the data dir is, measured before the drain (fileCreateMicros). */
  fileCreateCpuMicros: number;
}

/** utime + stime (+ cutime + cstime: `reaped`) of /proc/<path>/stat, in ms (10 ms ticks). */
function cpuMs(pid: number, path = `${pid}`, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${path}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0)) * 10;
  } catch {
    return NaN;
  }
}

/** Read system calls (syscr of /proc/<pid>/io: its own and its reaped children's) of a process. */
function readCalls(pid: string): number {
  return Number(/^syscr: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
}

/** CPU and read calls of the batch waiters of `dataDir` alive now (they wait 10 s for a next job before they leave). */
function waitersCost(dataDir: string): { cpuMs: number; reads: number } {
  const mark = join(dataDir, 'runs', '.waiters');
  let cpu = 0;
  let reads = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark)) continue;
      cpu += cpuMs(Number(pid), pid, true);
      reads += readCalls(pid);
    } catch {
      // gone meanwhile
    }
  }
  return { cpuMs: cpu, reads };
}

/**
 * CPU (µs, this process's user + system) to create one small file in a new directory of `dir`'s
 * file system, as a job's waiter creates six. It sets how far this bench can go: tmpfs ~4 µs, a
 * fresh ext4 ~10 µs, this project's VMs' ext4 after many files were deleted 150-180 µs (kernel time).
 */
function fileCreateMicros(dir: string): number {
  const base = join(dir, 'fs-probe');
  const c0 = process.cpuUsage();
  for (let i = 0; i < 100; i++) {
    mkdirSync(join(base, String(i)), { recursive: true });
    for (const f of ['a', 'b', 'c', 'd', 'e', 'f']) {
      const fd = openSync(join(base, String(i), f), 'wx', 0o600);
      writeSync(fd, '1\n');
      closeSync(fd);
    }
  }
  const c = process.cpuUsage(c0);
  rmSync(base, { recursive: true, force: true });
  return round((c.user + c.system) / 600, 1);
}

/** Passes the daemon has run (the count of its pass-duration histogram). */
async function passesOf(daemon: Daemon): Promise<number> {
  const a = daemon.api();
  const res = await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${a.token}` } });
  return Number(/^tend_pass_duration_seconds_count(?:\{[^}]*\})? (\d+)$/m.exec(await res.text())?.[1] ?? NaN);
}

export async function daemonJobs(total: number, parallel: number): Promise<DaemonRound> {
  const box = scratch('tend-bench-djobs-');
  const dir = box.dir;
  const fileCreateCpuMicros = fileCreateMicros(dir);
  const store = Store.open(paths(dir).db);
  const now = Date.now();
  store.tx(() => {
    for (let i = 0; i < total; i++) postJob(store, { command: '/bin/true', name: `noop ${i}` }, now);
  });
  // TEND_BENCH_DAEMON_NODE_ARGS (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof) profiles the daemon.
  const nodeArgs = (process.env.TEND_BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // TEND_JOB_SHELL (e.g. sh) is passed on: the daemon's batch waiters are then that shell, not perl.
  const shell: Record<string, string> = process.env.TEND_JOB_SHELL ? { TEND_JOB_SHELL: process.env.TEND_JOB_SHELL } : {};
  const daemon = new Daemon(dir, { TEND_MAX_PARALLEL: String(parallel), TEND_DAEMON_INTERVAL_MS: '1000', ...shell }, ['--quiet'], { nodeArgs });
  try {
    const count = store.db.prepare("SELECT status, count(*) AS n FROM jobs WHERE status IN ('COMPLETED', 'ERROR') GROUP BY status");
    let done = 0;
    let failed = 0;
    let cpu0 = NaN;
    let main0 = NaN;
    let done0 = 0;
    const deadline = Date.now() + 300_000;
    while (done < total) {
      if (Date.now() > deadline) throw new Error(`daemon drained ${done} of ${total} jobs in 300 s`);
      if (daemon.exit) throw new Error(`the daemon exited ${daemon.exit.code ?? daemon.exit.signal}: ${daemon.stderr}`);
      await delay(5);
      const rows = count.all() as { status: string; n: number }[];
      failed = rows.find((r) => r.status === 'ERROR')?.n ?? 0;
      done = rows.reduce((a, r) => a + r.n, 0);
      if (Number.isNaN(cpu0) && done > 0) {
        cpu0 = cpuMs(daemon.pid);
        main0 = cpuMs(daemon.pid, `${daemon.pid}/task/${daemon.pid}`);
        done0 = done;
      }
    }
    const end = Date.now();
    const cpu = cpuMs(daemon.pid) - cpu0;
    const main = cpuMs(daemon.pid, `${daemon.pid}/task/${daemon.pid}`) - main0;
    const waiters = waitersCost(dir);
    // Every pass it ran: its API (and the count) starts before its engine does.
    const passes = await passesOf(daemon);
    const n = Math.max(1, total - done0);
    return {
      jobsPerSec: round(total / ((end - earliestLaunch(dir)) / 1000), 1),
      failed,
      daemonCpuMsPerJob: round(cpu / n, 2),
      daemonStartCpuMs: round(cpu0, 0),
      daemonMainThreadMsPerJob: round(main / n, 2),
      passesPerJob: round(passes / total, 2),
      waitersCpuMsPerJob: round(waiters.cpuMs / total, 2),
      waiterReadCallsPerJob: round(waiters.reads / total, 0),
      fileCreateCpuMicros,
    };
  } finally {
    await daemon.stop().catch(() => daemon.kill9());
    store.close();
    box.remove();
  }
}
