// `tend daemon run`: own the data dir, serve the API, run the pass every TEND_DAEMON_INTERVAL_MS,
// write daemon.state.json each pass, stop cleanly on SIGINT/SIGTERM/SIGHUP (within a slice of a second, or once a cancel in flight is done),
// pass at once on SIGUSR2 (all four answered from before the data dir is claimed).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtRendererDir } from '../app-root.js';
import { openAddress } from '../api/auth.js';
import { paths } from '../datadir.js';
import { startEngineHost, type EngineHost } from '../host/engine-host.js';
import { SettingsError, settingsForStart, type Settings } from '../settings.js';
import { RotatingLog } from './log.js';
import { installOwnerSignals } from './signals.js';
import { daemonStarted } from './v8-flags.js';

export interface RunOptions {
  dataDir: string;
  intervalMs?: number;
  /** Also print log lines to stderr (foreground use). */
  echo?: boolean;
  api?: boolean;
  /** Default: read from the environment here, once (a bad value stops the start, named). */
  settings?: Settings;
}

/** The built renderer, served in browser mode (absent until the UI is built). */
export function rendererDir(): string | null {
  const dir = builtRendererDir();
  return existsSync(join(dir, 'index.html')) ? dir : null;
}

export async function runDaemon(o: RunOptions): Promise<number> {
  const file = new RotatingLog(paths(o.dataDir).log);
  const log = (line: string) => {
    file.write(line);
    if (o.echo ?? true) process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  let settings: Settings;
  try {
    settings = o.settings ?? settingsForStart(process.env, (message) => log(`tend daemon: ${message}`));
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    for (const p of err.problems) log(`tend daemon: ${p.message}`);
    // As before: a bad pass interval is a usage error (2); a bad limit or history setting, 1.
    return err.problems.some((p) => p.knob === 'TEND_DAEMON_INTERVAL_MS') ? 2 : 1;
  }
  const intervalMs = o.intervalMs ?? settings.intervalMs;
  // Before the claim: from the moment daemon.pid names us, `tend` commands signal us.
  const signals = installOwnerSignals();
  let onLost!: (why: string) => void;
  const lost = new Promise<string>((r) => (onLost = r));
  let served: EngineHost;
  try {
    served = await startEngineHost({ dataDir: o.dataDir, intervalMs, kind: 'daemon', api: o.api ?? settings.api, rendererDir: rendererDir(), settings, log, signal: signals.signal, onLost });
  } catch (err) {
    signals.dispose();
    log(`tend daemon: ${(err as Error).message}`);
    return 1;
  }
  const { engine, api } = served;
  engine.bus.once('pass', daemonStarted);
  signals.onNudge(() => engine.nudge());
  if (signals.signal.aborted) {
    log(`tend daemon stopping: ${String(signals.signal.reason)} during startup`);
    await served.stop();
    signals.dispose();
    return 0;
  }
  if (api) {
    log(`API at ${api.url} (token in ${paths(o.dataDir).api})`);
    // The token runs commands as this user: shown to the terminal that started the daemon, never
    // written to daemon.log (`--quiet`, as `ensure` and the service unit start it, shows nothing).
    if (o.echo ?? true) process.stdout.write(`open ${openAddress(api.url, api.token)}\n`);
  }
  engine.bus.on('event', (e) => {
    if (e.level !== 'info') log(`${e.level.toUpperCase()} ${e.type} ${e.routineId ?? (e.jobId !== null ? `job ${e.jobId}` : '')} ${e.message}`);
  });
  log(`tend daemon ${process.pid} owns ${o.dataDir} (pass every ${intervalMs} ms)`);
  const end = await Promise.race([signals.stop.then((sig) => ({ sig, why: null })), lost.then((why) => ({ sig: null, why }))]);
  if (end.why) log(`tend daemon stopping: ${end.why} (running jobs keep running)`);
  else log(`tend daemon stopping on ${end.sig} (running jobs keep running; the next daemon adopts them)`);
  await served.stop();
  signals.dispose();
  return end.why ? 1 : 0;
}
