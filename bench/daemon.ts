// An idle daemon with 100 routines: resident memory and CPU over a window (default 20 s), what
// each large dependency costs in memory when loaded alone into a fresh Node (per-module cost);
// and `tend daemon status --json` wall time beside `node -e 0`, measured in the same run.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { childEnv, killTracked, scratch, TEND } from '../test/helpers/cli.js';
import { Daemon } from '../test/helpers/daemon.js';
import { importIdleRoutines } from './routines.js';
import { median, round } from './stats.js';
const TICKS = 100; // USER_HZ on Linux

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function wallMs(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  execFileSync(cmd, args, { env, stdio: 'ignore' });
  return performance.now() - t0;
}

/** Modules the daemon may load, each imported in turn into one fresh Node; RSS growth after a GC. */
const MODULES = ['better-sqlite3', 'zod', 'fastify', 'yaml', 'cron-parser', 'commander', '@modelcontextprotocol/sdk/server/mcp.js', '../main/engine/engine.js', '../main/engine/daemon/run.js'];

const MODULE_COST = `
const rss = () => { global.gc(); return process.memoryUsage().rss / 1048576; };
const out = { node: 0, modules: {} };
let last = rss(); out.node = Math.round(last * 10) / 10;
for (const m of process.argv.slice(1)) { await import(m); const now = rss(); out.modules[m.split('/dist/').pop()] = Math.round((now - last) * 10) / 10; last = now; }
out.total = Math.round(last * 10) / 10;
process.stdout.write(JSON.stringify(out));
`;

function moduleCosts(): unknown {
  const here = dirname(fileURLToPath(import.meta.url));
  const specs = MODULES.map((m) => (m.startsWith('.') ? pathToFileURL(join(here, m)).href : m));
  try {
    // Run from the repository so bare names resolve to its node_modules.
    return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', MODULE_COST, ...specs], { cwd: join(here, '..', '..'), encoding: 'utf8' }));
  } catch (err) {
    return { error: String(err) };
  }
}

export async function benchDaemon() {
  const windowMs = Number(process.env.TEND_BENCH_IDLE_MS ?? 20_000);
  const box = scratch('tend-bench-daemon-');
  const dir = box.dir;
  const env = childEnv(dir);
  try {
    importIdleRoutines(dir);
    const daemon = await new Daemon(dir, {}, ['--quiet']).ready();
    const pid = daemon.pid;
    await delay(3000); // settle after start
    const rss: number[] = [];
    const c0 = cpuTicks(pid);
    const t0 = performance.now();
    while (performance.now() - t0 < windowMs) {
      rss.push(rssMiB(pid));
      await delay(Math.min(5000, windowMs / 4));
    }
    const cpuPercent = ((cpuTicks(pid) - c0) / TICKS / ((performance.now() - t0) / 1000)) * 100;

    const status: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < 10; i++) {
      bare.push(wallMs(process.execPath, ['-e', '0'], env));
      try {
        status.push(wallMs(process.execPath, [TEND, 'daemon', 'status', '--json'], env));
      } catch {
        status.push(NaN);
      }
    }
    await daemon.stop();
    return {
      name: 'idle',
      description: 'idle daemon with 100 routines: resident memory and CPU; per-module memory; `tend daemon status --json` beside `node -e 0`',
      modules: moduleCosts(),
      loadAverage1m: round(os.loadavg()[0]!, 2),
      windowMs,
      // V8's memory reducer shrinks an idle heap some 10-25 s after start (about 10 MiB here); the
      // median depends on whether it ran inside the window, `min` is the settled figure when it did.
      rssMiB: { median: round(median(rss), 1), max: round(Math.max(...rss), 1), min: round(Math.min(...rss), 1) },
      cpuPercentOfOneCore: round(cpuPercent, 2),
      statusMs: round(median(status), 1),
      nodeMs: round(median(bare), 1),
      statusRatio: round(median(status) / median(bare), 2),
      targets: { rssMiB: 55, cpuPercent: 0.5, statusRatio: 2 },
    };
  } finally {
    await killTracked();
    box.remove();
  }
}
