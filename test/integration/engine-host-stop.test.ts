// The host's stop order: a stop that comes while a cancel is between TERM and KILL waits for it,
// so no process Tend started is left running with its run already ended (supervised by nobody).
// A real host (claim, engine, API) on a scratch data dir, real processes that ignore TERM.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startEngineHost, type EngineHost } from '../../main/engine/host/engine-host.js';
import { postJob } from '../../main/engine/ops/jobs.js';
import { removeRoutine, saveRoutine } from '../../main/engine/ops/routines.js';
import { settings } from '../../main/engine/settings.js';
import { createLocalBackend } from '../../worker/local/index.js';
import { readPidRecord } from '../../worker/jobdir/jobdir.js';
import { isSameProcessAlive } from '../../worker/jobdir/proc.js';
import { tailLog } from '../../worker/jobdir/logs.js';
import { fixture, stopAll } from '../helpers/local-job.js';
import { waitFor } from '../helpers/wait.js';

const COMPUTER = 'tester@host';
const GRACE_MS = 1500;
let dir: string | null = null;
let host: EngineHost | null = null;

afterEach(async () => {
  await host?.stop();
  host = null;
  if (dir) {
    await stopAll(createLocalBackend({ dataDir: dir, tendVersion: 'test' }), dir);
    rmSync(dir, { recursive: true, force: true });
  }
  dir = null;
});

async function start(): Promise<EngineHost> {
  dir = mkdtempSync(join(tmpdir(), 'tend-host-stop-'));
  host = await startEngineHost({ dataDir: dir, intervalMs: 50, kind: 'daemon', api: true, rendererDir: null, settings: settings({ keepDays: null }), log: () => undefined, options: { computer: COMPUTER, killGraceMs: GRACE_MS } });
  return host;
}

/** The process of a job directory once it runs and has said it ignores TERM. */
async function ignoringTerm(runDir: () => string | null | undefined) {
  return waitFor(
    () => {
      const d = runDir();
      const rec = d ? readPidRecord(d) : null;
      return d && rec && tailLog(d, 'stdout', 100).includes('ignoring TERM') ? { pid: rec.pid, startTime: rec.startTime } : null;
    },
    15_000,
    'the process to run and ignore TERM',
  );
}

describe('the host stop order', () => {
  it("waits for the pass's cancel in flight: the removed routine's process is gone when stop resolves", async () => {
    const h = await start();
    const id = `${COMPUTER}:stop/stubborn`;
    saveRoutine(h.engine.store, { id, realtime: true, command: fixture('ignore-term.sh'), tz: 'UTC' }, { now: Date.now(), localComputer: COMPUTER });
    h.engine.nudge();
    const proc = await ignoringTerm(() => h.engine.store.runs.latest(id)?.runDir);
    // Removing the routine makes the next pass stop its run: TERM now, KILL after the grace.
    removeRoutine(h.engine.store, id, Date.now());
    h.engine.nudge();
    await waitFor(() => h.engine.scheduler.ctx.launches.stopping.size > 0, 10_000, 'the cancel to be in flight');
    expect(isSameProcessAlive(proc.pid, proc.startTime)).toBe(true);

    await h.stop();
    expect(isSameProcessAlive(proc.pid, proc.startTime)).toBe(false);
    expect(existsSync(join(dir!, 'daemon.pid'))).toBe(false);
  });

  it('waits for a cancel asked by hand (the IPC path, no HTTP request to wait on)', async () => {
    const h = await start();
    const job = postJob(h.engine.store, { command: fixture('ignore-term.sh'), computer: COMPUTER }, Date.now());
    h.engine.nudge();
    const proc = await ignoringTerm(() => h.engine.store.jobs.get(job.id)?.runDir);
    const cancelled = h.engine.cancelJob(job.id);
    await waitFor(() => h.engine.store.jobs.get(job.id)?.status === 'CANCEL', 10_000, 'the job to be cancelled');
    expect(isSameProcessAlive(proc.pid, proc.startTime)).toBe(true);

    await h.stop();
    expect(isSameProcessAlive(proc.pid, proc.startTime)).toBe(false);
    await expect(cancelled).resolves.toBeUndefined();
  });
});
