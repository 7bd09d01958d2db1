// "What is waiting and why", derived from the store by another process than the scheduler: each
// reason pinned against the state a real Scheduler (scripted backend, manual clock) left behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pausedBackends, whatIsWaiting, type WaitItem } from '../../main/engine/mcp/waiting.js';
import { runNow, stopRoutine } from '../../main/engine/ops/control.js';
import { postJob } from '../../main/engine/ops/jobs.js';
import { pauseRoutine } from '../../main/engine/ops/routines.js';
import { setScheduleMode } from '../../main/engine/ops/schedules.js';
import { COMPUTER, Fixture, full, MIN, SEC } from '../helpers/engine-fixture.js';

let f: Fixture;
let noDaemon: string;
afterEach(() => {
  f?.close();
  rmSync(noDaemon, { recursive: true, force: true });
});

function setup(o: ConstructorParameters<typeof Fixture>[0] = {}): Fixture {
  noDaemon = mkdtempSync(join(tmpdir(), 'tend-waiting-'));
  return (f = new Fixture(o));
}

const waiting = (maxParallel?: number) => whatIsWaiting(f.store, noDaemon, f.now(), { computer: COMPUTER, maxParallel });
const item = (items: WaitItem[], routine: string): WaitItem => {
  const i = items.find((x) => x.routineId === full(routine));
  if (!i) throw new Error(`${routine} is not waiting: ${JSON.stringify(items)}`);
  return i;
};

describe('whatIsWaiting', () => {
  it('a batch dependency of the same cycle, then nothing once it completed', async () => {
    setup();
    f.define({ id: 'dl', at: '2099-01-01T00:00' });
    f.define({ id: 'parse', at: '2026-01-05T09:01', after: [full('dl')] });
    f.advance(MIN);
    await f.pass();
    const w = waiting();
    expect(item(w.items, 'parse')).toMatchObject({ kind: 'run', status: 'PENDING', category: 'dependency', reason: `waiting for ${full('dl')} (not run on 2026-01-05)`, dueAt: '2026-01-05T09:01:00.000Z' });
    expect(w.daemon).toEqual({ running: false, pid: null, note: expect.stringContaining('no daemon owns the data dir') });
    // dl completes (a manual run counts for today's cycle): parse starts, nothing waits.
    const dl = runNow(f.control(), full('dl'));
    await f.pass();
    f.backend.finish(dl.id, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.only('parse').status).toMatch(/^(STARTING|RUNNING)$/);
    expect(waiting().items.filter((i) => i.routineId === full('parse') && i.category === 'dependency')).toEqual([]);
  });

  it('a retry waits for its time; a DELAYED run keeps why it was late', async () => {
    setup();
    f.define({ id: 'flaky', at: '2099-01-01T00:00', retry: { every: 60 * SEC, for: 10 * MIN }, tolerance: '30s' });
    const run = runNow(f.control(), full('flaky'));
    await f.pass();
    f.backend.finish(run.id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    expect(item(waiting().items, 'flaky')).toMatchObject({ status: 'PENDING', category: 'time', reason: `retry at ${new Date(f.now() + 60 * SEC).toISOString()} (attempt 2)` });
    // The backend goes unhealthy: the retry cannot start and becomes DELAYED.
    f.backend.setHealth(false, 'disk full');
    f.advance(60 * SEC);
    await f.pass();
    f.advance(31 * SEC);
    await f.pass();
    const late = item(waiting().items, 'flaky');
    expect(late).toMatchObject({ status: 'DELAYED', delayedBecause: 'backend local paused: disk full' });
    // With no daemon running, that is why it does not start now.
    expect(late.category).toBe('daemon');
  });

  it('observe-only schedules, a full slot count, an offline worker', async () => {
    setup({ options: { maxParallel: 1 } });
    f.define({ id: 'shadowed', schedule: 'shadow', at: '2026-01-05T09:01' });
    setScheduleMode(f.store, 'shadow', 'observe', f.now());
    f.define({ id: 'long', at: '2099-01-01T00:00' });
    f.define({ id: 'blocked', at: '2026-01-05T09:01' });
    f.define({ id: 'other@far:remote', at: '2026-01-05T09:01' });
    runNow(f.control(), full('long'));
    await f.pass();
    f.advance(MIN);
    await f.pass();
    const w = waiting(1);
    expect(item(w.items, 'shadowed')).toMatchObject({ category: 'observe-only', reason: 'schedule shadow is observe-only: status is tracked, nothing is started' });
    expect(item(w.items, 'blocked')).toMatchObject({ category: 'slot', reason: 'no free slot: 1 jobs in flight (max_parallel 1)' });
    expect(item(w.items, 'other@far:remote')).toMatchObject({ category: 'worker', reason: 'worker other@far has never connected (start `tend worker` there)' });
    expect(w.items.some((i) => i.routineId === full('long'))).toBe(false); // running: not waiting
    // A worker that was seen long ago is offline, with when.
    f.store.pool.seen('other@far', f.now() - 10 * MIN, {});
    expect(item(waiting(1).items, 'other@far:remote').reason).toBe(`worker other@far offline: last seen ${new Date(f.now() - 10 * MIN).toISOString()}`);
    // With room, and no daemon: the daemon is what is missing.
    expect(item(waiting(8).items, 'blocked')).toMatchObject({ category: 'daemon' });
  });

  it('realtime routines not running: paused, stopped by hand, backing off after quick deaths', async () => {
    setup();
    f.define({ id: 'paused', realtime: true, command: 'x' });
    pauseRoutine(f.store, full('paused'), f.now());
    f.define({ id: 'stopped', realtime: true, command: 'x' });
    f.define({ id: 'dying', realtime: true, command: 'x' });
    await f.pass();
    await stopRoutine(f.control(), full('stopped'));
    for (let death = 0; death < 2; death++) {
      f.backend.finish(f.latest('dying').id, { exitCode: 1 });
      f.advance(100);
      await f.pass();
    }
    const w = waiting();
    expect(item(w.items, 'paused')).toMatchObject({ kind: 'realtime', status: 'NOT RUNNING', category: 'paused' });
    expect(item(w.items, 'stopped')).toMatchObject({ category: 'stopped', reason: 'stopped by hand (stopped by hand): start it with run_routine' });
    const dying = item(w.items, 'dying');
    expect(dying.category).toBe('time');
    expect(dying.reason).toMatch(/^restart backoff until \S+Z after quick deaths \(last: exit 1\)$/);
  });

  it('batch jobs: dependencies, a worker that must claim it', () => {
    setup();
    const first = postJob(f.store, { command: 'true', computer: 'other@far' }, f.now());
    const second = postJob(f.store, { command: 'true', after: [first.id] }, f.now());
    const w = waiting();
    expect(w.items.find((i) => i.jobId === first.id)).toMatchObject({ kind: 'job', status: 'PENDING', category: 'worker', reason: expect.stringContaining('other@far has never connected') });
    expect(w.items.find((i) => i.jobId === second.id)).toMatchObject({ status: 'WAITING', category: 'dependency', reason: `waiting for job ${first.id} (PENDING)` });
  });

  it('bounded: limit, total, truncated', async () => {
    setup();
    for (let i = 0; i < 5; i++) postJob(f.store, { command: 'true', computer: 'other@far' }, f.now());
    const w = whatIsWaiting(f.store, noDaemon, f.now(), { computer: COMPUTER, limit: 2 });
    expect(w).toMatchObject({ total: 5, truncated: true });
    expect(w.items).toHaveLength(2);
  });
});

describe('pausedBackends', () => {
  it('follows backend:paused and backend:resumed in the events since a time', async () => {
    setup();
    f.define({ id: 'dl', at: '2026-01-05T09:01', tolerance: '1h' });
    f.backend.setHealth(false, 'disk full');
    f.advance(MIN);
    await f.pass();
    expect(pausedBackends(f.store, 0)).toEqual(new Map([['local', 'disk full']]));
    expect(pausedBackends(f.store, f.now() + 1)).toEqual(new Map());
    f.backend.setHealth(true);
    await f.pass();
    expect(pausedBackends(f.store, 0)).toEqual(new Map());
  });
});
