// One-click operations on real processes: stopping a routine stops its whole session
// (grandchildren included, also one that moved to a process group of its own, also one that
// ignores TERM), restart is stop then start as one operation, a stopped realtime routine stays
// stopped, and cancelling a one-off job stops it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { EngineHarness, SHARED_FIX, alive, id, pidRecord, sessionAlive } from '../helpers/engine-harness.js';

let h: EngineHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** The routine's pid and its two grandchildren (fork-grandchild.sh records them). */
async function family(runDir: string): Promise<{ pid: number; grandchildren: number[] }> {
  const gc = await waitFor(() => {
    try {
      return readFileSync(join(runDir, 'grandchildren'), 'utf8').trim();
    } catch {
      return null;
    }
  }, 15_000, 'the grandchildren to start');
  const pid = pidRecord(runDir)!.pid;
  const grandchildren = gc.split(' ').map(Number);
  expect(grandchildren).toHaveLength(2);
  for (const p of [pid, ...grandchildren]) expect(alive(p), `process ${p}`).toBe(true);
  return { pid, grandchildren };
}

describe('stop', () => {
  it('engine.stopRoutine stops a batch run and every grandchild; the run is CANCELLED with how it ended', async () => {
    h = new EngineHarness({ killGraceMs: 2000 });
    h.define('ctl/forker', { at: '2099-01-01T00:00', retry: 'none', command: SHARED_FIX('fork-grandchild.sh') });
    const run = h.engine.runNow(id('ctl/forker'));
    const running = await h.waitRun('ctl/forker', (r) => r.id === run.id && r.status === 'RUNNING', 15_000, 'RUNNING');
    const { pid, grandchildren } = await family(running.runDir!);

    const stopped = await h.engine.stopRoutine(id('ctl/forker'));
    expect(stopped.map((r) => r.id)).toEqual([run.id]);
    // Resolved only once nothing of the job is left.
    for (const p of [pid, ...grandchildren]) expect(alive(p), `process ${p} after stop`).toBe(false);
    expect(sessionAlive(pid)).toEqual([]);
    const settled = await h.waitRun('ctl/forker', (r) => r.exitCode !== null || r.signal !== null, 10_000, 'the way it ended recorded');
    expect(settled).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand', signal: 'TERM' });
    expect(h.store.ledger.all()).toEqual([]);
  });

  it('a routine that ignores TERM is KILLed after the grace period, grandchildren and all', async () => {
    h = new EngineHarness({ killGraceMs: 300 });
    h.define('ctl/stubborn', { realtime: true, command: 'bash', args: ['-c', `trap '' TERM; ${SHARED_FIX('fork-grandchild.sh')} & while :; do sleep 1; done`] });
    const running = await h.waitRun('ctl/stubborn', (r) => r.status === 'RUNNING', 15_000, 'RUNNING');
    const { grandchildren } = await family(running.runDir!);
    const pid = pidRecord(running.runDir!)!.pid;

    const started = Date.now();
    await h.engine.stopRoutine(id('ctl/stubborn'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    for (const p of [pid, ...grandchildren]) expect(alive(p), `process ${p} after stop`).toBe(false);
    expect(sessionAlive(pid)).toEqual([]);
    const settled = await h.waitRun('ctl/stubborn', (r) => r.signal !== null, 10_000, 'the end recorded');
    expect(settled).toMatchObject({ status: 'STOPPED', signal: 'KILL' });
    // Stopped by hand: no restart, however many passes go by.
    await h.morePasses(10);
    expect(h.runs('ctl/stubborn')).toHaveLength(1);
  });

  it('restart is stop then start as one operation: the old session is gone before the new instance is queued', async () => {
    h = new EngineHarness({ killGraceMs: 2000 });
    h.define('ctl/rt', { realtime: true, command: SHARED_FIX('fork-grandchild.sh') });
    const first = await h.waitRun('ctl/rt', (r) => r.status === 'RUNNING', 15_000, 'RUNNING');
    const old = await family(first.runDir!);

    const { stopped, started } = await h.engine.restart(id('ctl/rt'));
    expect(stopped.map((r) => r.id)).toEqual([first.id]);
    expect(sessionAlive(old.pid)).toEqual([]);
    for (const p of old.grandchildren) expect(alive(p)).toBe(false);
    expect(started).toMatchObject({ manual: true, status: 'STARTING' });
    const second = await h.waitRun('ctl/rt', (r) => r.id === started.id && r.status === 'RUNNING', 15_000, 'the new instance RUNNING');
    const fresh = await family(second.runDir!);
    expect(fresh.pid).not.toBe(old.pid);
    expect(h.run(first.id)).toMatchObject({ status: 'STOPPED', reason: 'restarted by hand' });
    expect(h.runs('ctl/rt')).toHaveLength(2);
  });
});

describe('one-off jobs', () => {
  it('cancelJob stops a running job and its grandchildren; the job is CANCEL', async () => {
    h = new EngineHarness({ killGraceMs: 2000 });
    const job = h.post({ command: SHARED_FIX('fork-grandchild.sh') });
    const running = await waitFor(() => (h!.job(job.id).status === 'RUNNING' ? h!.job(job.id) : null), 15_000, 'the job RUNNING');
    const { pid, grandchildren } = await family(running.runDir!);
    await h.engine.cancelJob(job.id);
    for (const p of [pid, ...grandchildren]) expect(alive(p)).toBe(false);
    expect(h.job(job.id)).toMatchObject({ status: 'CANCEL', reason: 'cancelled by hand' });
    // Settling what the process did afterwards does not resurrect it.
    await h.morePasses(5);
    expect(h.job(job.id).status).toBe('CANCEL');
    expect(h.store.ledger.all()).toEqual([]);
  });
});
