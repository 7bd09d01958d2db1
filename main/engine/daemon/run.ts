// `tend daemon run`: own the data dir, serve the API, run the pass every TEND_DAEMON_INTERVAL_MS,
// write daemon.state.json each pass, stop cleanly within a slice of a second on SIGINT/SIGTERM,
// pass at once on SIGUSR2.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApi, type ApiServer } from '../api/server.js';
import { paths } from '../datadir.js';
import { Engine } from '../engine.js';
import { tendVersion } from '../version.js';
import { startWebhookDelivery } from '../webhooks/daemon.js';
import { RotatingLog } from './log.js';
import { claimOwnership, type Ownership } from './ownership.js';
import { writeState, type DaemonState } from './state.js';

export interface RunOptions {
  dataDir: string;
  intervalMs?: number;
  /** Also print log lines to stderr (foreground use). */
  echo?: boolean;
  api?: boolean;
}

/** The built renderer, served in browser mode (absent until the UI is built). */
export function rendererDir(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, '..', '..', '..', 'renderer'), join(here, '..', '..', '..', '..', 'dist', 'renderer')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  return null;
}

export async function runDaemon(o: RunOptions): Promise<number> {
  const file = new RotatingLog(paths(o.dataDir).log);
  const log = (line: string) => {
    file.write(line);
    if (o.echo ?? true) process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  let intervalMs: number;
  try {
    intervalMs = o.intervalMs ?? parseInterval(process.env.TEND_DAEMON_INTERVAL_MS);
  } catch (err) {
    log(`tend daemon: ${(err as Error).message}`);
    return 2;
  }
  let own: Ownership;
  try {
    mkdirSync(o.dataDir, { recursive: true });
    own = claimOwnership(o.dataDir);
  } catch (err) {
    log(`tend daemon: ${(err as Error).message}`);
    return 1;
  }
  let engine: Engine;
  try {
    engine = new Engine({ dataDir: o.dataDir, intervalMs, options: envOptions() });
  } catch (err) {
    log(`tend daemon: ${(err as Error).message}`);
    own.release();
    return 1;
  }
  let api: ApiServer | null = null;
  if (o.api ?? process.env.TEND_API !== 'off') {
    try {
      api = await startApi(engine, { rendererDir: rendererDir() });
      log(`API at ${api.url} (token in ${paths(o.dataDir).api}); open ${api.url}/#token=${api.token}`);
    } catch (err) {
      log(`tend daemon: API not started: ${(err as Error).message}`);
    }
  }
  const state: DaemonState = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    lastHeartbeat: new Date().toISOString(),
    version: tendVersion(),
    api: api ? { url: api.url } : null,
    intervalMs,
    lastPass: null,
    clockJumps: 0,
  };
  writeState(o.dataDir, state);
  engine.bus.on('event', (e) => {
    if (e.type === 'clock:jump') state.clockJumps++;
    if (e.level !== 'info') log(`${e.level.toUpperCase()} ${e.type} ${e.routineId ?? (e.jobId !== null ? `job ${e.jobId}` : '')} ${e.message}`);
  });
  engine.bus.on('pass', (p) => {
    state.lastHeartbeat = new Date().toISOString();
    state.lastPass = { durationMs: Math.round(p.durationMs * 1000) / 1000, fired: p.fired, submitted: p.submitted, settled: p.settled, faults: p.faults };
    try {
      writeState(o.dataDir, state);
    } catch {
      /* next pass tries again */
    }
  });
  let resolveStop!: () => void;
  const stopped = new Promise<void>((r) => (resolveStop = r));
  const onStop = () => resolveStop();
  const onNudge = () => engine.nudge();
  process.on('SIGINT', onStop);
  process.on('SIGTERM', onStop);
  process.on('SIGUSR2', onNudge);
  const webhooks = startWebhookDelivery(engine, log);
  log(`tend daemon ${process.pid} owns ${o.dataDir} (pass every ${intervalMs} ms)`);
  engine.start();
  await stopped;
  log('tend daemon stopping (running jobs keep running; the next daemon adopts them)');
  await api?.close().catch(() => undefined);
  await webhooks.stop();
  await engine.stop();
  engine.store.close();
  own.release();
  process.off('SIGINT', onStop);
  process.off('SIGTERM', onStop);
  process.off('SIGUSR2', onNudge);
  return 0;
}

/** TEND_MAX_PARALLEL (jobs in flight) and TEND_BATCH_SLOTS (one-off jobs this host runs itself). */
function envOptions(): { maxParallel?: number; batchSlots?: number } {
  const out: { maxParallel?: number; batchSlots?: number } = {};
  for (const [name, key, min] of [['TEND_MAX_PARALLEL', 'maxParallel', 1], ['TEND_BATCH_SLOTS', 'batchSlots', 0]] as const) {
    const raw = process.env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min || n > 10_000) throw new Error(`${name} must be an integer from ${min} to 10000, got "${raw}"`);
    out[key] = n;
  }
  return out;
}

function parseInterval(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1000;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 10 || n > 3_600_000) throw new Error(`TEND_DAEMON_INTERVAL_MS must be a number of milliseconds between 10 and 3600000, got "${raw}"`);
  return Math.round(n);
}
