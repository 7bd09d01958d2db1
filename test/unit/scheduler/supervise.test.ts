// Status the pass derives (scheduler/supervise.ts): late runs become DELAYED exactly past their
// tolerance, counted from a retry's own time; a timeout and a heartbeat interval count exactly;
// an external realtime routine that goes silent is given up, not restarted; a paused realtime
// routine is not started.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../main/engine/clock.js';
import { newRun } from '../../../main/engine/domain/run.js';
import { runNow, stopRoutine } from '../../../main/engine/ops/control.js';
import { reportExternal } from '../../../main/engine/ops/external.js';
import { editRoutine, pauseRoutine, removeRoutine } from '../../../main/engine/ops/routines.js';
import { enforceLimits, markLate, restartDelayMs } from '../../../main/engine/scheduler/supervise.js';
import { COMPUTER, Fixture, HOUR, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';
import { TestBackend } from '../../helpers/test-backend.js';

/** A fixture whose backend keeps every launch queued (STARTING: launched, never seen running). */
function queued(): Fixture {
  const clock = new ManualClock(T0);
  return new Fixture({ clock, backend: new TestBackend('local', { clock, startAs: 'queued' }) });
}

let f: Fixture;
afterEach(() => f?.close());

describe('late runs', () => {
  it('become DELAYED one millisecond past the tolerance, not at it, with the reason they waited and a message', async () => {
    f = new Fixture();
    f.backend.setHealth(false, 'disk full');
    f.define({ id: 'r', cron: '0 * * * *', tolerance: '2m' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('r');
    f.clock.set(T0 + HOUR + 2 * MIN);
    await f.pass();
    expect(f.run(run.id).status).toBe('PENDING');
    f.clock.set(T0 + HOUR + 2 * MIN + 1);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'DELAYED', reason: expect.stringContaining('disk full') });
    const e = f.events('run:delayed');
    expect(e.map((x) => [x.runId, x.routineId, x.level])).toEqual([[run.id, full('r'), 'warn']]);
    expect(e[0]!.message).toMatch(/^DELAYED: due 2026-01-05T10:00:00\.000Z, not started within 120s \(.*disk full.*\)$/);
    f.advance(MIN);
    await f.pass();
    expect(f.events('run:delayed')).toHaveLength(1);
  });

  it('a retry is late counted from its own time, not the original due time', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *', tolerance: '2m', retry: { every: '5m', for: '1h' } });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.backend.finish(f.only('r').id, { exitCode: 1 });
    f.backend.setHealth(false, 'paused');
    f.advance(SEC);
    await f.pass();
    const retry = f.latest('r');
    expect(retry.notBefore).toBe(T0 + HOUR + SEC + 5 * MIN);
    f.clock.set(retry.notBefore! + 2 * MIN);
    await f.pass();
    expect(f.run(retry.id).status).toBe('PENDING');
    f.advance(1);
    await f.pass();
    expect(f.run(retry.id).status).toBe('DELAYED');
  });
});

describe('status of runs the pass does not know', () => {
  it('a waiting run whose routine is gone is left to the orphan sweep: neither made late nor timed out', () => {
    f = new Fixture();
    const def = f.define({ id: 'r', cron: '0 * * * *', tolerance: '1m', timeout: '1m' });
    const waiting = newRun(def, T0, T0);
    const running = { ...newRun(def, T0, T0), status: 'RUNNING' as const, startedAt: T0 };
    f.store.runs.insert(waiting);
    removeRoutine(f.store, def.id, f.now());
    f.scheduler.ctx.defs.refresh(f.store);
    markLate(f.scheduler.ctx, [waiting], new Map(), T0 + HOUR);
    enforceLimits(f.scheduler.ctx, [running], T0 + HOUR);
    expect(f.events().map((e) => e.type)).toEqual(['routine:created', 'routine:removed']);
    expect(f.run(waiting.id).status).toBe('PENDING');
  });

  it('a late run that no phase gave a reason is DELAYED as "not started"', async () => {
    f = new Fixture();
    const def = f.define({ id: 'r', cron: '0 * * * *', tolerance: '1m' });
    const run = newRun(def, T0, T0);
    f.store.runs.insert(run);
    f.scheduler.ctx.defs.refresh(f.store);
    markLate(f.scheduler.ctx, [run], new Map(), T0 + 2 * MIN);
    expect(f.run(run.id)).toMatchObject({ status: 'DELAYED', reason: 'not started' });
  });
});

describe('stopping', () => {
  it('a stop that fails is reported, and asked again on the next pass', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const id = f.only('r').id;
    f.store.runs.cas(id, ['STARTING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
    f.backend.fail('cancel', 'no such process group');
    f.advance(SEC);
    await f.pass();
    await Promise.all(f.scheduler.ctx.launches.stopping.values());
    expect(f.events('run:stop-failed').map((e) => [e.runId, e.message])).toEqual([[id, 'could not stop: no such process group']]);
    f.backend.succeed('cancel');
    f.advance(SEC);
    await f.pass();
    expect(f.backend.cancelled()).toEqual([id, id]);
  });

  it('a waiting run (never launched) of a removed routine is cancelled without a stop and without a fault', async () => {
    f = new Fixture();
    f.backend.setHealth(false, 'paused');
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const id = f.only('r').id;
    removeRoutine(f.store, full('r'), f.now());
    await f.pass();
    expect(f.run(id)).toMatchObject({ status: 'CANCELLED', reason: 'its routine was removed' });
    expect(f.events('pass:fault')).toEqual([]);
    expect(f.backend.cancelled()).toEqual([]);
  });

  it('a run of a removed routine recorded on a backend no longer configured is settled without a fault', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const id = f.only('r').id;
    f.store.db.prepare(`UPDATE ledger SET backend = 'gone'`).run();
    removeRoutine(f.store, full('r'), f.now());
    await f.pass();
    expect(f.run(id)).toMatchObject({ status: 'CANCELLED', reason: 'its routine was removed' });
    expect(f.events('pass:fault')).toEqual([]);
  });
});

describe('runs whose routine was removed or moved', () => {
  async function running(def: Record<string, unknown>): Promise<string> {
    f = new Fixture();
    f.define(def);
    f.clock.set(T0 + HOUR);
    await f.pass();
    const id = f.only(String(def.id)).id;
    f.backend.markRunning(id);
    f.advance(SEC);
    await f.pass();
    expect(f.run(id).status).toBe('RUNNING');
    return id;
  }
  const settled = (id: string) => {
    const r = f.run(id);
    return { status: r.status, reason: r.reason, endedAt: r.endedAt, cancelled: f.backend.cancelled().includes(id) };
  };
  const moveAway = (id: string) => editRoutine(f.store, full(id), { computer: 'other@elsewhere' }, { now: f.now(), localComputer: COMPUTER });

  it('a batch run of a removed routine is cancelled and its process stopped', async () => {
    const id = await running({ id: 'etl', cron: '0 * * * *' });
    removeRoutine(f.store, full('etl'), f.now());
    await f.pass();
    expect(settled(id)).toEqual({ status: 'CANCELLED', reason: 'its routine was removed', endedAt: f.now(), cancelled: true });
    expect(f.events('run:cancelled').map((e) => [e.runId, e.message])).toEqual([[id, 'its routine was removed: its RUNNING run is stopped']]);
  });

  it('a realtime run of a removed routine ends STOPPED and its process is stopped', async () => {
    const id = await running({ id: 'feed', realtime: true });
    removeRoutine(f.store, full('feed'), f.now());
    await f.pass();
    expect(settled(id)).toEqual({ status: 'STOPPED', reason: 'its routine was removed', endedAt: f.now(), cancelled: true });
    expect(f.events('run:stopped').map((e) => [e.runId, e.message])).toEqual([[id, 'its routine was removed: its RUNNING run is stopped']]);
  });

  it('a realtime run whose routine moved to another computer ends EXITED here, so it starts there at once', async () => {
    const id = await running({ id: 'feed', realtime: true });
    moveAway('feed');
    await f.pass();
    const why = `its routine moved from ${COMPUTER} to other@elsewhere`;
    expect(settled(id)).toEqual({ status: 'EXITED', reason: why, endedAt: f.now(), cancelled: true });
    expect(f.events('run:stopped').map((e) => e.message)).toEqual([`${why}: its RUNNING run is stopped`]);
  });

  it('a batch run whose routine moved to another computer is cancelled here', async () => {
    const id = await running({ id: 'etl', cron: '0 * * * *' });
    moveAway('etl');
    await f.pass();
    expect(settled(id)).toMatchObject({ status: 'CANCELLED', reason: `its routine moved from ${COMPUTER} to other@elsewhere`, cancelled: true });
  });

  it('a run stopped as an orphan is not also judged by its limits in that pass', async () => {
    const id = await running({ id: 'etl', cron: '0 * * * *', timeout: '1m' });
    moveAway('etl');
    f.advance(2 * MIN);
    await f.pass();
    expect(settled(id)).toMatchObject({ status: 'CANCELLED', cancelled: true });
    expect(f.events('run:timeout')).toEqual([]);
  });

  it('a run of a routine still on this computer is left running', async () => {
    const id = await running({ id: 'feed', realtime: true });
    editRoutine(f.store, full('feed'), { computer: COMPUTER }, { now: f.now(), localComputer: COMPUTER });
    await f.pass();
    expect(settled(id)).toMatchObject({ status: 'RUNNING', cancelled: false });
  });
});

describe('timeouts', () => {
  it('count from the start: exactly the timeout is not yet over, a millisecond more is', async () => {
    f = new Fixture();
    f.define({ id: 'slow', cron: '0 * * * *', timeout: '1m' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('slow');
    f.backend.markRunning(run.id, { startedAt: T0 + HOUR });
    f.clock.set(T0 + HOUR + SEC);
    await f.pass();
    const started = f.run(run.id).startedAt!;
    f.clock.set(started + MIN);
    await f.pass();
    expect(f.events('run:timeout')).toEqual([]);
    f.clock.set(started + MIN + 1);
    await f.pass();
    const e = f.events('run:timeout');
    expect(e.map((x) => [x.runId, x.level, x.message])).toEqual([[run.id, 'error', 'timed out after 60s; stopping it']]);
    expect(f.run(run.id).reason).toBe('timed out after 60s');
  });
});

describe('timeouts of runs not yet seen running', () => {
  it('a run still STARTING (queued by its backend) times out counted from its creation', async () => {
    f = queued();
    f.define({ id: 'slow', cron: '0 * * * *', timeout: '1m' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('slow');
    f.clock.set(run.createdAt + MIN);
    await f.pass();
    expect(f.backend.cancelled()).toEqual([]);
    f.advance(1);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'STARTING', reason: 'timed out after 60s' });
    expect(f.backend.cancelled()).toEqual([run.id]);
  });

  it('a run still waiting to be launched does not time out: the timeout counts from a launch', async () => {
    f = new Fixture();
    f.backend.setHealth(false, 'paused');
    f.define({ id: 'slow', cron: '0 * * * *', timeout: '1m', tolerance: '1h' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.advance(5 * MIN);
    await f.pass();
    expect(f.only('slow')).toMatchObject({ status: 'PENDING', reason: null });
    expect(f.events('run:timeout')).toEqual([]);
  });

  it('a realtime routine’s timeout never stops its instance (it is meant to run for ever)', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true, timeout: '1m' });
    await f.pass();
    f.advance(SEC);
    await f.pass();
    f.advance(HOUR);
    await f.pass();
    expect(f.backend.cancelled()).toEqual([]);
    expect(f.events('run:timeout')).toEqual([]);
  });
});

describe('realtime supervision', () => {
  it('without a heartbeat, liveness is the process alone: a silent instance runs on', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true, grace: '10s' });
    await f.pass();
    f.advance(SEC);
    await f.pass();
    f.advance(HOUR);
    await f.pass();
    expect(f.only('feed')).toMatchObject({ status: 'RUNNING', reason: null });
    expect(f.backend.cancelled()).toEqual([]);
  });

  it('an instance its backend has not started yet (STARTING) is not stopped for silence', async () => {
    f = queued();
    f.define({ id: 'feed', realtime: true, heartbeat: '10s', grace: '10s' });
    await f.pass();
    f.advance(5 * MIN);
    await f.pass();
    expect(f.only('feed')).toMatchObject({ status: 'STARTING', reason: null });
    expect(f.backend.cancelled()).toEqual([]);
  });

  it('restart by hand: the micro-pass after the stopped instance exits counts the requested run as its replacement, and one instance runs', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    f.advance(SEC);
    await f.pass();
    const old = f.only('feed');
    // restartRoutine's order: the stop, then the run asked for, then the old waiter's exit is heard.
    await stopRoutine(f.control(), full('feed'), 'restarted by hand');
    const asked = runNow(f.control(), full('feed'));
    expect(await f.scheduler.settleExited(old.id)).toBe(true);
    expect(f.runs('feed').map((r) => r.id)).toEqual([old.id, asked.id]);
    await f.pass();
    f.advance(SEC);
    await f.pass();
    expect(f.runs('feed').map((r) => [r.id, r.status])).toEqual([
      [old.id, 'STOPPED'],
      [asked.id, 'RUNNING'],
    ]);
  });

  it('the micro-pass gives an exited instance’s slot to its replacement: a batch run waiting for a slot does not hold one', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    f.advance(SEC);
    await f.pass();
    f.define({ id: 'hourly', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.only('hourly').status).toBe('PENDING');
    const old = f.only('feed');
    f.backend.finish(old.id, { exitCode: 1 });
    expect(await f.scheduler.settleExited(old.id)).toBe(true);
    expect(f.runs('feed').map((r) => r.status)).toEqual(['EXITED', 'STARTING']);
    expect(f.only('hourly').status).toBe('PENDING');
  });

  it('a routine in restart backoff says until when, and the micro-pass after another routine’s exit leaves it waiting', async () => {
    f = new Fixture();
    f.define({ id: 'a', realtime: true });
    f.define({ id: 'c', realtime: true });
    await f.pass();
    // Two quick deaths of c: its next start waits 1 s.
    f.backend.finish(f.only('c').id, { exitCode: 1 });
    await f.pass();
    f.backend.finish(f.latest('c').id, { exitCode: 1 });
    await f.pass();
    expect(f.runs('c').map((r) => r.status)).toEqual(['EXITED', 'EXITED']);
    expect(f.scheduler.waitReasons().get(full('c'))).toBe(`restart backoff until ${new Date(f.now() + SEC).toISOString()}`);
    f.advance(2 * SEC);
    const a = f.only('a');
    f.backend.finish(a.id, { exitCode: 1 });
    expect(await f.scheduler.settleExited(a.id)).toBe(true);
    expect(f.runs('a').map((r) => r.status)).toEqual(['EXITED', 'STARTING']);
    expect(f.runs('c')).toHaveLength(2);
    await f.pass();
    expect(f.runs('c')).toHaveLength(3);
  });

  it('an external routine that goes silent is given up (ERROR), never restarted by Tend', async () => {
    f = new Fixture();
    f.define({ id: 'ext', realtime: true, external: true, heartbeat: '30s', grace: '10s' });
    reportExternal(f.store, () => undefined, full('ext'), 'start', {}, f.now());
    const run = f.only('ext');
    f.advance(20 * SEC);
    await f.pass(); // past the grace, 20 s silent: within the interval
    expect(f.run(run.id).status).toBe('RUNNING');
    f.advance(11 * SEC);
    await f.pass(); // 31 s silent
    expect(f.run(run.id)).toMatchObject({ status: 'ERROR', reason: 'heartbeat silent for 31s (interval 30s); external routine, Tend cannot restart it', endedAt: f.now() });
    expect(f.events('routine:silent').map((e) => [e.level, e.message])).toEqual([['error', 'ERROR: heartbeat silent for 31s (interval 30s); external routine, Tend cannot restart it']]);
    f.advance(MIN);
    await f.pass();
    expect(f.runs('ext')).toHaveLength(1);
    expect(f.backend.count('submit')).toBe(0);
  });

  it('a heartbeat counts from the last beat; silence during the startup grace does not count', async () => {
    f = new Fixture();
    f.define({ id: 'ext', realtime: true, external: true, heartbeat: '30s', grace: '2m' });
    reportExternal(f.store, () => undefined, full('ext'), 'start', {}, f.now());
    const run = f.only('ext');
    f.advance(2 * MIN);
    await f.pass(); // silent 120 s, but exactly at the end of the grace
    expect(f.run(run.id).status).toBe('RUNNING');
    reportExternal(f.store, () => undefined, full('ext'), 'heartbeat', {}, f.now());
    f.advance(30 * SEC);
    await f.pass(); // exactly the interval since the beat
    expect(f.run(run.id).status).toBe('RUNNING');
    f.advance(1);
    await f.pass();
    expect(f.run(run.id).status).toBe('ERROR');
  });

  it('a paused realtime routine is not started', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    pauseRoutine(f.store, full('feed'), f.now());
    await f.pass();
    expect(f.runs('feed')).toEqual([]);
  });

  it('restart backoff: none for the first quick death, then 1 s doubling to a 60 s cap', () => {
    expect([0, 1, 2, 3, 4, 7, 8, 20].map(restartDelayMs)).toEqual([0, 0, 1000, 2000, 4000, 32_000, 60_000, 60_000]);
  });
});
