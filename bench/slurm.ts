// 200 no-op jobs through Slurm: Tend (an Engine with the Slurm backend: job directories, the run.sh
// wrapper, the ledger, one squeue per pass) versus a bare bash loop a person would write (sbatch
// each job, then squeue until none is left), on the same cluster, in the same run: 5 rounds,
// alternating who goes first, each run on an idle cluster (the second of two back-to-back runs
// inherits the first's aftermath in the controller), compared by median time. Both look at Slurm
// about once per second: the daemon's default pass interval and the bare loop's `sleep 1`.
// Target: Tend at least 0.9x the bare loop's throughput.
//
// The cluster is the one scripts/slurm/up.sh starts (run here first when root); the result
// records the scheduler settings in effect, read from `scontrol show config` and `sinfo`.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildEngine } from '../main/engine/host/build-engine.js';
import { postJob } from '../main/engine/ops/jobs.js';
import { median, round } from './stats.js';

const run = promisify(execFile);
const JOBS = Number(process.env['TEND_BENCH_SLURM_JOBS'] ?? 200);
const POLL_MS = 1000;
const ROUNDS = 5;
const TIMEOUT_MS = 15 * 60_000;

function findUpScript(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const p = join(dir, 'scripts', 'slurm', 'up.sh');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  return null;
}

function clusterSettings(): Record<string, string> {
  const out: Record<string, string> = {};
  const conf = spawnSync('scontrol', ['show', 'config'], { encoding: 'utf8' }).stdout;
  for (const key of ['SLURM_VERSION', 'ClusterName', 'SchedulerType', 'SchedulerParameters', 'SelectType', 'SelectTypeParameters', 'ProctrackType', 'TaskPlugin', 'KillWait', 'MinJobAge', 'AccountingStorageType', 'JobAcctGatherType']) {
    const m = new RegExp(`^${key}\\s*=\\s*(.*)$`, 'm').exec(conf);
    if (m) out[key] = m[1]!.trim();
  }
  const part = spawnSync('scontrol', ['--oneliner', 'show', 'partition'], { encoding: 'utf8' }).stdout.split('\n')[0] ?? '';
  const over = /OverSubscribe=(\S+)/.exec(part);
  if (over) out['PartitionOverSubscribe'] = over[1]!;
  out['nodes'] = spawnSync('sinfo', ['--noheader', '--Node', '--format=%N cpus=%c memory=%mMB %T'], { encoding: 'utf8' }).stdout.trim().split('\n').join('; ');
  return out;
}

/**
 * The bare loop, as a person would write it in bash: sbatch one no-op job after the other, then
 * squeue once a second until none is left. Prints the number of jobs that did not end COMPLETED.
 */
const BARE_LOOP = `#!/usr/bin/env bash
set -eu
n=$1 dir=$2
printf '#!/bin/sh\\nexit 0\\n' > "$dir/noop.sh"
chmod +x "$dir/noop.sh"
ids=()
for ((i = 0; i < n; i++)); do
  ids+=("$(sbatch --parsable --output=/dev/null --chdir="$dir" --job-name=bench-bare "$dir/noop.sh")")
done
list=$(IFS=,; echo "\${ids[*]}")
while [ -n "$(squeue --noheader --jobs="$list" --states=PENDING,CONFIGURING,RUNNING,COMPLETING --format=%i)" ]; do sleep 1; done
squeue --noheader --jobs="$list" --states=all --format=%T | grep -vc '^COMPLETED$' || true
`;

async function bare(dir: string): Promise<{ seconds: number; failed: number }> {
  const script = join(dir, 'bare-loop.sh');
  writeFileSync(script, BARE_LOOP, { mode: 0o755 });
  const t0 = performance.now();
  const { stdout } = await run('bash', [script, String(JOBS), dir], { timeout: TIMEOUT_MS });
  return { seconds: (performance.now() - t0) / 1000, failed: Number(stdout.trim()) || 0 };
}

/** Until the cluster runs no job at all, then two more seconds. */
async function quiet(): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const { stdout } = await run('squeue', ['--noheader', '--format=%i']);
    if (stdout.trim() === '') break;
    await delay(250);
  }
  await delay(2000);
}

/** Tend: an Engine passing every POLL_MS, JOBS batch jobs posted with backend slurm. */
async function tend(dir: string): Promise<{ seconds: number; failed: number; passes: number }> {
  const engine = buildEngine({ dataDir: dir, intervalMs: POLL_MS, options: { maxParallel: JOBS + 10, batchSlots: JOBS + 10 } });
  let passes = 0;
  engine.bus.on('pass', () => passes++);
  try {
    engine.start();
    const t0 = performance.now();
    const ids = engine.store.tx(() => Array.from({ length: JOBS }, () => postJob(engine.store, { command: '/bin/true', backend: 'slurm', name: 'bench-tend' }, Date.now()).id));
    engine.nudge();
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const counts = engine.store.jobs.counts();
      const ended = (counts['COMPLETED'] ?? 0) + (counts['ERROR'] ?? 0) + (counts['CANCEL'] ?? 0);
      if (ended >= ids.length) break;
      if (Date.now() > deadline) throw new Error(`bench slurm: Tend timed out (${JSON.stringify(counts)})`);
      await delay(20);
    }
    const seconds = (performance.now() - t0) / 1000;
    const counts = engine.store.jobs.counts();
    return { seconds, failed: ids.length - (counts['COMPLETED'] ?? 0), passes };
  } finally {
    await engine.close();
  }
}

/**
 * The shared lock the Slurm tests take on the cluster (test/slurm/helpers.ts): the test that stops
 * the controller holds it exclusively, so it never runs in the middle of a measurement.
 */
async function lockCluster(): Promise<() => void> {
  const child = spawn('flock', ['--shared', join(os.tmpdir(), 'tend-slurm-tests.lock'), '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => (d.toString().includes('locked') ? resolve() : undefined));
    child.on('exit', (code) => reject(new Error(`bench slurm: flock exited ${code}`)));
  });
  return () => child.stdin.end();
}

export async function benchSlurm() {
  if (spawnSync('sinfo', ['--version']).status !== 0) return { name: 'slurm', skipped: 'sinfo is not on PATH: install and start the test cluster with sudo bash scripts/slurm/up.sh' };
  const rounds: { bare: { seconds: number; failed: number }; tend: { seconds: number; failed: number; passes: number } }[] = [];
  const unlock = await lockCluster();
  try {
    const up = findUpScript();
    if (up && process.getuid?.() === 0) {
      const r = spawnSync('bash', [up], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`bench slurm: scripts/slurm/up.sh failed: ${r.stderr}`);
    }
    for (let i = 0; i < ROUNDS; i++) {
      const dirs = [mkdtempSync(join(os.tmpdir(), 'tend-bench-slurm-bare-')), mkdtempSync(join(os.tmpdir(), 'tend-bench-slurm-tend-'))];
      try {
        // Alternate who goes first, and let the controller finish the previous run's aftermath
        // (completions, accounting) before each measurement: neither side inherits the other's tail.
        let b: Awaited<ReturnType<typeof bare>>;
        let t: Awaited<ReturnType<typeof tend>>;
        if (i % 2 === 0) {
          await quiet();
          b = await bare(dirs[0]!);
          await quiet();
          t = await tend(dirs[1]!);
        } else {
          await quiet();
          t = await tend(dirs[1]!);
          await quiet();
          b = await bare(dirs[0]!);
        }
        rounds.push({ bare: b, tend: t });
      } finally {
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      }
    }
  } finally {
    unlock();
  }
  const rate = (s: number) => JOBS / s;
  // Medians: one round can meet a slow scheduler cycle on either side.
  const bareRate = rate(median(rounds.map((r) => r.bare.seconds)));
  const tendRate = rate(median(rounds.map((r) => r.tend.seconds)));
  const ratio = tendRate / bareRate;
  return {
    name: 'slurm',
    jobs: JOBS,
    pollMs: POLL_MS,
    rounds: rounds.map((r) => ({
      bareSeconds: round(r.bare.seconds),
      bareJobsPerSecond: round(rate(r.bare.seconds)),
      tendSeconds: round(r.tend.seconds),
      tendJobsPerSecond: round(rate(r.tend.seconds)),
      tendPasses: r.tend.passes,
      failed: { bare: r.bare.failed, tend: r.tend.failed },
    })),
    bareJobsPerSecond: round(bareRate),
    tendJobsPerSecond: round(tendRate),
    ratio: round(ratio),
    target: 0.9,
    meetsTarget: ratio >= 0.9 && rounds.every((r) => r.bare.failed === 0 && r.tend.failed === 0),
    cluster: clusterSettings(),
  };
}
