// Where the app's engine is. Exactly one process owns a data dir: when a live headless daemon
// owns it, the app attaches to it over the HTTP API; otherwise the app claims the data dir
// (as 'app') and runs the engine in its own process, with the API too, so that the CLI and
// browser mode work while the app runs.
import { readApiFile } from '../engine/api/auth.js';
import { isLiveOwner, readPidRecord, type PidRecord } from '../engine/daemon/ownership.js';
import { nudgeDaemon } from '../engine/daemon/nudge.js';
import { startEngineHost } from '../engine/host/engine-host.js';
import { TendError, errorMessage } from '../engine/errors.js';
import { settingsForStart, type Settings } from '../engine/settings.js';
import { tendVersion } from '../engine/version.js';
import { engineClient, httpClient, type TendClient } from './client.js';
import type { AppInfo } from './ipc-channels.js';

export type { AppInfo };

export interface Host {
  readonly info: AppInfo;
  readonly client: TendClient;
  /** Ask for a pass now. */
  nudge(): void;
  /** The machine goes to sleep or wakes up (Electron's powerMonitor). */
  power(what: 'suspend' | 'resume'): void;
  /** Attached only: called once when the daemon no longer owns the data dir. */
  onOwnerGone(cb: () => void): void;
  close(): Promise<void>;
}

export interface HostOptions {
  dataDir: string;
  /** Default: the settings' (TEND_DAEMON_INTERVAL_MS). */
  intervalMs?: number;
  /** Default: read from the environment when the app owns the data dir (a bad value stops the start, named). */
  settings?: Settings;
  /** Serve the built renderer at the API address (browser mode). */
  rendererDir?: string | null;
  /** Start the HTTP API in engine mode (default: the settings', unless TEND_API=off). */
  api?: boolean;
  log?: (line: string) => void;
  /** How long to wait for an owning daemon to publish its API address. */
  attachTimeoutMs?: number;
  /** How often an attached app checks that its daemon is still alive. */
  ownerCheckMs?: number;
  fetch?: typeof fetch;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The owner of the data dir, if it is alive and is not this process. */
export function liveOtherOwner(dataDir: string): PidRecord | null {
  const rec = readPidRecord(dataDir);
  return rec && rec.pid !== process.pid && isLiveOwner(rec) ? rec : null;
}

export async function startHost(o: HostOptions): Promise<Host> {
  const owner = liveOtherOwner(o.dataDir);
  if (owner) return attach(o, owner);
  try {
    return await own(o);
  } catch (err) {
    // A daemon claimed the data dir between our look and our claim: it is the owner now.
    const now = err instanceof TendError && err.code === 'CONFLICT' ? liveOtherOwner(o.dataDir) : null;
    if (now) return attach(o, now);
    throw err;
  }
}

async function own(o: HostOptions): Promise<Host> {
  const log = o.log ?? (() => undefined);
  const settings = o.settings ?? settingsForStart(process.env, log);
  const served = await startEngineHost({
    dataDir: o.dataDir,
    intervalMs: o.intervalMs ?? settings.intervalMs,
    kind: 'app',
    api: o.api ?? settings.api,
    rendererDir: o.rendererDir ?? null,
    settings,
    log,
  });
  const { engine, api } = served;
  if (api) log(`API at ${api.url}`);
  const client = engineClient(engine);
  let closing: Promise<void> | null = null;
  return {
    info: { mode: 'engine', dataDir: o.dataDir, url: api?.url ?? null, enginePid: process.pid, version: tendVersion() },
    client,
    nudge: () => engine.nudge(),
    power(what) {
      // The pass sees the clock jump by itself; saying why helps whoever reads the events.
      engine.log({ type: what === 'suspend' ? 'power:suspend' : 'power:resume', message: what === 'suspend' ? 'the machine is going to sleep' : 'the machine woke up; looking at what was missed' });
      if (what === 'resume') engine.nudge();
    },
    onOwnerGone: () => undefined,
    close() {
      closing ??= (async () => {
        client.close();
        await served.stop();
      })();
      return closing;
    },
  };
}

async function attach(o: HostOptions, owner: PidRecord): Promise<Host> {
  const deadline = Date.now() + (o.attachTimeoutMs ?? 10_000);
  let api = readApiFile(o.dataDir);
  // A daemon that just started may not have written api.json yet.
  while ((!api || api.pid !== owner.pid) && Date.now() < deadline && isLiveOwner(owner)) {
    await sleep(100);
    api = readApiFile(o.dataDir);
  }
  if (!api || api.pid !== owner.pid) {
    throw new TendError('UNAVAILABLE', `${owner.kind} pid ${owner.pid} owns ${o.dataDir} but serves no HTTP API (started with TEND_API=off?); stop it or start it with the API`);
  }
  const client = httpClient({ url: api.url, token: api.token, ...(o.fetch ? { fetch: o.fetch } : {}) });
  // Fail now, clearly, rather than at the first click.
  try {
    await client.call('daemon.status', {});
  } catch (err) {
    client.close();
    throw new TendError('UNAVAILABLE', `daemon pid ${owner.pid} owns ${o.dataDir} but its API at ${api.url} does not answer: ${errorMessage(err)}`);
  }
  const gone: (() => void)[] = [];
  let fired = false;
  const timer = setInterval(() => {
    if (fired || isLiveOwner(owner)) return;
    fired = true;
    clearInterval(timer);
    for (const cb of gone) cb();
  }, o.ownerCheckMs ?? 2000);
  timer.unref?.();
  return {
    info: { mode: 'attached', dataDir: o.dataDir, url: api.url, enginePid: owner.pid, version: tendVersion() },
    client,
    nudge: () => void nudgeDaemon(o.dataDir),
    // The daemon has its own clock-jump detection; waking it saves up to an interval.
    power: (what) => {
      if (what === 'resume') nudgeDaemon(o.dataDir);
    },
    onOwnerGone: (cb) => void gone.push(cb),
    async close() {
      clearInterval(timer);
      client.close();
    },
  };
}
