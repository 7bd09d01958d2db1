// An idle daemon with 100 routines: resident memory and CPU over a window (default 20 s), what
// each large dependency costs in memory when loaded alone into a fresh Node (per-module cost);
// and `tend daemon status --json` wall time beside `node -e 0`, measured in the same run.
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
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

/**
 * Where the resident memory is: anonymous (V8's heap, malloc) or file pages, and of those the
 * node binary's own (Node's built-in modules' sources and code caches, ICU data, V8's code):
 * what `node -e 0` holds of the binary is the floor, each built-in module loaded adds to it.
 */
function rssParts(pid: number): { anonMiB: number; fileMiB: number; nodeBinaryMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (re: RegExp) => Number(re.exec(status)?.[1] ?? NaN);
  let binary = 0;
  let inBinary = false;
  const exe = readlinkSync(`/proc/${pid}/exe`);
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inBinary = line.trimEnd().endsWith(exe);
    else if (inBinary && line.startsWith('Rss:')) binary += Number(/(\d+)/.exec(line)![1]);
  }
  return { anonMiB: round(kB(/RssAnon:\s+(\d+) kB/) / 1024, 1), fileMiB: round(kB(/RssFile:\s+(\d+) kB/) / 1024, 1), nodeBinaryMiB: round(binary / 1024, 1) };
}

function wallMs(cmd: string, args: string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  execFileSync(cmd, args, { env, stdio: 'ignore' });
  return performance.now() - t0;
}

/** Modules the daemon may load, each imported in turn into one fresh Node; RSS growth after a GC. */
const MODULES = ['better-sqlite3', 'zod', 'fastify', 'yaml', 'cron-parser', 'commander', '@modelcontextprotocol/sdk/server/mcp.js', '../main/engine/engine.js', '../main/engine/daemon/run.js'];
/** What `tend daemon run` loads as it ships: the CLI bundle's chunk of the daemon (scripts/bundle-cli.mjs), in a Node of its own. */
const BUNDLE = ['../main/cli/chunks/main/engine/daemon/run.js'];

const MODULE_COST = `
const rss = () => { global.gc(); return process.memoryUsage().rss / 1048576; };
const out = { node: 0, modules: {} };
let last = rss(); out.node = Math.round(last * 10) / 10;
const { createRequire } = await import('node:module');
const require = createRequire(process.cwd() + '/');
// The CLI bundle is CommonJS (scripts/bundle-cli.mjs): required as the CLI does, not imported (which lexes it for its exports).
const load = (m) => (m.includes('/dist/main/cli/') ? require(new URL(m).pathname) : import(m));
for (const m of process.argv.slice(1)) { await load(m); const now = rss(); out.modules[m.split('/dist/').pop()] = Math.round((now - last) * 10) / 10; last = now; }
out.total = Math.round(last * 10) / 10;
process.stdout.write(JSON.stringify(out));
`;

function moduleCosts(modules: string[]): unknown {
  const here = dirname(fileURLToPath(import.meta.url));
  const specs = modules.map((m) => (m.startsWith('.') ? pathToFileURL(join(here, m)).href : m));
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
    let parts = rssParts(pid);
    const c0 = cpuTicks(pid);
    const t0 = performance.now();
    while (performance.now() - t0 < windowMs) {
      rss.push(rssMiB(pid));
      parts = rssParts(pid);
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
      modules: moduleCosts(MODULES),
      bundle: moduleCosts(BUNDLE),
      loadAverage1m: round(os.loadavg()[0]!, 2),
      windowMs,
      // V8's memory reducer shrinks an idle heap some 10-25 s after start (about 10 MiB here); the
      // median depends on whether it ran inside the window, `min` is the settled figure when it did.
      rssMiB: { median: round(median(rss), 1), max: round(Math.max(...rss), 1), min: round(Math.min(...rss), 1) },
      /** At the last sample. */
      rssParts: parts,
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
