// `tend daemon run`: own the data dir, run the pass every TEND_DAEMON_INTERVAL_MS, stop cleanly
// within a slice of a second on SIGINT/SIGTERM, pass on SIGUSR2.
import { Engine } from '../engine.js';
import { claimOwnership, type Ownership } from './ownership.js';

export interface RunOptions {
  dataDir: string;
  intervalMs?: number;
  log?: (line: string) => void;
}

export async function runDaemon(o: RunOptions): Promise<number> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  const intervalMs = o.intervalMs ?? parseInterval(process.env.TEND_DAEMON_INTERVAL_MS);
  let own: Ownership;
  try {
    own = claimOwnership(o.dataDir);
  } catch (err) {
    log(`tend daemon: ${(err as Error).message}`);
    return 1;
  }
  const engine = new Engine({ dataDir: o.dataDir, intervalMs });
  engine.bus.on('event', (e) => {
    if (e.level !== 'info') log(`${e.level.toUpperCase()} ${e.type} ${e.routineId ?? (e.jobId !== null ? `job ${e.jobId}` : '')} ${e.message}`);
  });
  let resolveStop!: () => void;
  const stopped = new Promise<void>((r) => (resolveStop = r));
  const onStop = () => resolveStop();
  const onNudge = () => engine.nudge();
  process.on('SIGINT', onStop);
  process.on('SIGTERM', onStop);
  process.on('SIGUSR2', onNudge);
  log(`tend daemon ${process.pid} owns ${o.dataDir} (pass every ${intervalMs} ms)`);
  engine.start();
  await stopped;
  log('tend daemon stopping (running jobs keep running; the next daemon adopts them)');
  await engine.stop();
  engine.store.close();
  own.release();
  process.off('SIGINT', onStop);
  process.off('SIGTERM', onStop);
  process.off('SIGUSR2', onNudge);
  return 0;
}

function parseInterval(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1000;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 10 || n > 3_600_000) throw new Error(`TEND_DAEMON_INTERVAL_MS must be a number of milliseconds between 10 and 3600000, got "${raw}"`);
  return Math.round(n);
}
