// The owner of a data dir, the same for `tend daemon run` and the desktop app: claim the pidfile,
// build the engine with its backends, serve the API, write daemon.state.json each pass, deliver
// webhooks; and stop in order (stopOrder below).
import { startApi, type ApiServer } from '../api/server.js';
import { dataDirChange, dataDirIdentity } from '../daemon/data-dir-watch.js';
import { claimOwnership, type Ownership } from '../daemon/ownership.js';
import { writeState, type DaemonState } from '../daemon/state.js';
import { statusCountsKeeper } from '../daemon/status-counts.js';
import { throttle } from '../daemon/throttle.js';
import type { Engine, EngineConfig } from '../engine.js';
import { errorMessage } from '../errors.js';
import { tightenDataDir } from '../owner-only.js';
import type { Settings } from '../settings.js';
import { tendVersion } from '../version.js';
import { startWebhookDelivery } from '../webhooks/daemon.js';
import { buildEngine, type BuildEngineConfig } from './build-engine.js';
import { runInOrder } from './in-order.js';

export interface EngineHostOptions {
  dataDir: string;
  intervalMs: number;
  kind: 'daemon' | 'app';
  api: boolean;
  rendererDir: string | null;
  /** Scheduler options over the settings' (tests: this host's computer, a short grace). */
  options?: EngineConfig['options'];
  /** Backends used instead of the standard ones, by name (tests: a test double). */
  backends?: BuildEngineConfig['replace'];
  /** Read once by the starter (settingsForStart): the engine, the API and webhooks take theirs from here. */
  settings: Settings;
  log: (line: string) => void;
  /** A stop asked for during startup: the engine is not started (stop() still releases the claim). */
  signal?: AbortSignal;
  /** The data dir was deleted or replaced under us (seen after a pass): the owner should stop. */
  onLost?: (why: string) => void;
}

export interface EngineHost {
  engine: Engine;
  api: ApiServer | null;
  ownership: Ownership;
  /** Stop in order (stopOrder); resolves once the data dir is released. The same promise when called again. */
  stop(): Promise<void>;
}

/** Throws (having released what it took) when the data dir is owned or the store is refused. */
export async function startEngineHost(o: EngineHostOptions): Promise<EngineHost> {
  const tightened = tightenDataDir(o.dataDir);
  if (tightened.length) o.log(`made owner-only (other users could read or write them): ${tightened.join(', ')}`);
  const ownership = claimOwnership(o.dataDir, o.kind);
  let engine: Engine;
  try {
    engine = buildEngine({ dataDir: o.dataDir, intervalMs: o.intervalMs, options: o.options, settings: o.settings, retention: { keepDays: o.settings.keepDays }, replace: o.backends });
  } catch (err) {
    ownership.release();
    throw err;
  }
  let api: ApiServer | null = null;
  if (o.api) {
    try {
      api = await startApi(engine, { rendererDir: o.rendererDir });
    } catch (err) {
      o.log(`API not started: ${errorMessage(err)}`);
    }
  }
  const state: DaemonState = {
    pid: process.pid,
    startedAt: ownership.record.startedAt,
    lastHeartbeat: new Date().toISOString(),
    version: tendVersion(),
    api: api ? { url: api.url } : null,
    intervalMs: o.intervalMs,
    lastPass: null,
    clockJumps: 0,
    history: { keepDays: engine.retention.o.keepDays, lastSweep: null },
  };
  const opened = dataDirIdentity(o.dataDir);
  let lost = false;
  // `tend daemon status --json` reads these instead of opening the database.
  const counts = statusCountsKeeper(engine.store);
  const recount = () => {
    try {
      state.counts = counts.count(Date.now());
    } catch {
      delete state.counts; // status counts in the database itself
    }
  };
  // What the file says beside the heartbeat. A change is saved within a period (a second, or the
  // pass interval if shorter); a heartbeat alone every three periods (fresh for 10 s or more,
  // state.ts): rewriting this file (a rename) every second was most of an idle daemon's CPU.
  const period = Math.min(1000, o.intervalMs);
  const content = () => JSON.stringify([state.pausedBackends, state.lastPass && { ...state.lastPass, durationMs: 0 }, state.history, state.clockJumps, state.counts?.at]);
  let said = '';
  let savedAt = -Infinity;
  const save = () => {
    if (lost) return; // never into a directory that is not the one we own
    recount(); // at most once a period: while jobs pour through, every pass changes the database
    try {
      writeState(o.dataDir, state);
      said = content();
      savedAt = Date.now();
    } catch {
      /* the next pass tries again */
    }
  };
  save();
  const saveSoon = throttle(save, period);
  engine.bus.on('event', (e) => {
    if (e.type === 'clock:jump') state.clockJumps++;
  });
  engine.bus.on('pass', () => {
    const why = lost ? null : dataDirChange(o.dataDir, opened);
    if (!why) return;
    lost = true;
    o.log(`${why} while this daemon (pid ${process.pid}) owned it: stopping rather than running on against unlinked files`);
    o.onLost?.(why);
  });
  engine.bus.on('pass', (p) => {
    state.lastHeartbeat = new Date().toISOString();
    state.pausedBackends = Object.fromEntries(engine.pausedBackends());
    state.lastPass = { durationMs: Math.round(p.durationMs * 1000) / 1000, fired: p.fired, submitted: p.submitted, settled: p.settled, faults: p.faults };
    const sweep = engine.retention.last;
    if (sweep && state.history) state.history.lastSweep = { at: new Date(sweep.at).toISOString(), runs: sweep.runs, jobs: sweep.jobs, events: sweep.events, dirs: sweep.dirs };
    let dbChanged = false;
    try {
      dbChanged = counts.changed(Date.now());
    } catch {
      /* counted (or dropped) at the next save */
    }
    if (dbChanged || content() !== said || Date.now() - savedAt >= 3 * period) saveSoon();
  });
  const webhooks = startWebhookDelivery(engine, o.settings.webhooks);
  if (!o.signal?.aborted) {
    engine.start();
    if (ownership.previous) checkAfterUncleanShutdown(engine, ownership.previous.pid, o.log);
  }
  let stopping: Promise<void> | null = null;
  return {
    engine,
    api,
    ownership,
    stop() {
      stopping ??= stopOrder({ engine, api, webhooks, ownership, last: () => saveSoon.cancel(), log: o.log });
      return stopping;
    },
  };
}

/**
 * The stop order. The loop first, so nothing new is launched or stopped; then what is in flight
 * (launches being recorded, settles of exited waiters, cancels between TERM and KILL — a process
 * left mid-cancel would run on with its run already ended, supervised by nobody); then the API
 * and webhook delivery (requests still answered meanwhile; closing waits for those in flight,
 * which may have started cancels of their own); the store last, then the claim on the data dir.
 */
async function stopOrder(p: { engine: Engine; api: ApiServer | null; webhooks: { stop(): Promise<void> }; ownership: Ownership; last: () => void; log: (line: string) => void }): Promise<void> {
  await runInOrder(
    [
      ['the scheduler', () => p.engine.stop()],
      ['the API', () => p.api?.close()],
      ['webhook delivery', () => p.webhooks.stop()],
      ['the state file', p.last],
      ['the store', () => p.engine.close()],
      ['the claim on the data dir', () => p.ownership.release()],
    ],
    p.log,
  );
}

/**
 * The previous owner died holding the data dir: the file may have been damaged with it. The full
 * check reads every page, so it runs in a worker thread while the daemon schedules and answers;
 * its finding is an event (errors also reach daemon.log), the same one `tend daemon doctor` gives.
 */
function checkAfterUncleanShutdown(engine: Engine, pid: number, log: (line: string) => void): void {
  void engine.integrity.run().then((r) => {
    if (!engine.loop.running) return;
    const data = { ok: r.ok, problems: r.problems, ms: Math.round(r.ms), previousPid: pid };
    if (r.ok) {
      engine.log({ type: 'store:checked', message: `tend.db passed its integrity check after pid ${pid} stopped uncleanly (${Math.round(r.ms)} ms)`, data });
      return;
    }
    const message = `tend.db failed its integrity check after pid ${pid} stopped uncleanly: ${r.problems.slice(0, 3).join('; ')}`;
    try {
      engine.log({ type: 'store:damaged', message, data });
    } catch {
      // A damaged file may refuse the event too: the log gets the line instead.
      log(`ERROR store:damaged ${message}`);
    }
  });
}
