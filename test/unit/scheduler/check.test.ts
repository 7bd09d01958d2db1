// The check step (scheduler/check.ts) when backends answer oddly: a missing answer is a lost job,
// an unconfigured backend is reported and its work left alone, a heartbeat never moves back, and
// a run ended by hand whose process still runs is asked to stop.
import { afterEach, describe, expect, it } from 'vitest';
import type { PollState } from '../../../main/engine/backend.js';
import { ManualClock } from '../../../main/engine/clock.js';
import { runNow, stopRoutine } from '../../../main/engine/ops/control.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { QUICK_DEATH_MS } from '../../../main/engine/scheduler/check.js';
import { Fixture, HOUR, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';
import { Store } from '../../../main/engine/store/store.js';
import { TestBackend } from '../../helpers/test-backend.js';

let f: Fixture;
afterEach(() => f?.close());

async function oneRunning(): Promise<string> {
  f.define({ id: 'r', cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  await f.pass();
  f.advance(SEC);
  await f.pass();
  const run = f.only('r');
  expect(run.status).toBe('RUNNING');
  return run.id;
}

describe('check', () => {
  it('a job the backend gave no answer for ends ERROR as lost', async () => {
    f = new Fixture();
    const id = await oneRunning();
    f.backend.poll = async (): Promise<PollState[]> => [];
    f.advance(SEC);
    const report = await f.pass();
    expect(report.settled).toBe(1);
    expect(f.run(id)).toMatchObject({ status: 'ERROR', reason: 'backend returned no state', endedAt: f.now() });
    expect(f.store.ledger.count()).toBe(0);
  });

  it('work recorded on a backend that is not configured is reported and left in flight', async () => {
    f = new Fixture();
    const id = await oneRunning();
    f.store.db.prepare(`UPDATE ledger SET backend = 'gone'`).run();
    f.advance(SEC);
    const report = await f.pass();
    expect(report.settled).toBe(0);
    expect(f.events('backend:missing').map((e) => [e.level, e.message])).toEqual([['error', '1 job(s) recorded on backend "gone", which is not configured']]);
    expect(f.run(id).status).toBe('RUNNING');
    expect(f.store.ledger.count()).toBe(1);
  });

  it('records a newer heartbeat and never an older one', async () => {
    f = new Fixture();
    const id = await oneRunning();
    f.backend.heartbeat(id, T0 + HOUR + 5 * SEC);
    await f.pass();
    expect(f.run(id).heartbeatAt).toBe(T0 + HOUR + 5 * SEC);
    f.backend.heartbeat(id, T0 + HOUR + 2 * SEC);
    await f.pass();
    expect(f.run(id).heartbeatAt).toBe(T0 + HOUR + 5 * SEC);
  });

  it('a run ended elsewhere (a CLI stop) whose process still runs is asked to stop, and keeps how it ended', async () => {
    f = new Fixture();
    const id = await oneRunning();
    f.store.runs.cas(id, ['RUNNING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
    f.advance(SEC);
    await f.pass();
    expect(f.backend.calls.filter((c) => c.op === 'cancel')).toEqual([{ op: 'cancel', id, graceMs: f.opts.killGraceMs }]);
    f.advance(SEC);
    await f.pass();
    expect(f.run(id)).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand', signal: 'SIGTERM' });
    expect(f.store.ledger.count()).toBe(0);
  });
});

describe('what the backend reports', () => {
  it('a job whose start command was never fetched (unsent) ends ERROR with that reason: jobs are not put back to wait', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    f.backend.poll = async (): Promise<PollState[]> => [{ state: 'unsent', reason: 'start command expired unfetched' }];
    f.advance(SEC);
    const report = await f.pass();
    expect(report.settled).toBe(1);
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'ERROR', reason: 'start command expired unfetched' });
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a run the backend still has queued waits in flight: nothing is fetched or settled', async () => {
    f = new Fixture({ backend: new TestBackend('local', { startAs: 'queued' }) });
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.advance(SEC);
    const report = await f.pass();
    expect(report.settled).toBe(0);
    expect(f.backend.count('fetch')).toBe(0);
    expect(f.only('r').status).toBe('STARTING');
    expect(f.store.ledger.count()).toBe(1);
  });

  it('a poll that does not answer within the deadline is reported as a failed poll, naming the call', async () => {
    f = new Fixture({ options: { backendTimeoutMs: 20 } });
    const id = await oneRunning();
    f.backend.poll = () => new Promise<PollState[]>(() => undefined);
    await f.pass();
    expect(f.events('backend:poll-failed').map((e) => e.message)).toEqual(['local: poll failed: local poll did not answer within 20 ms']);
    expect(f.run(id).status).toBe('RUNNING');
  });

  it('a result that cannot be fetched within the deadline ends the run ERROR, naming the call', async () => {
    f = new Fixture({ options: { backendTimeoutMs: 20 } });
    const id = await oneRunning();
    f.backend.finish(id, { exitCode: 0 });
    f.backend.fetch = () => new Promise(() => undefined);
    await f.pass();
    expect(f.run(id)).toMatchObject({ status: 'ERROR', reason: 'could not read the result: local fetch did not answer within 20 ms' });
  });

  it('a job seen running moves FETCHED → RUNNING with the start time the backend reports, once', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    f.backend.markRunning(`job-${job.id}`, { startedAt: T0 - 5 * SEC });
    f.advance(SEC);
    await f.pass();
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'RUNNING', startedAt: T0 - 5 * SEC });
    expect(f.events('job:running').map((e) => [e.jobId, e.message])).toEqual([[job.id, `job ${job.id} running`]]);
  });

  it('a run seen running moves STARTING → RUNNING with the backend’s start time, and says so once', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('r');
    f.backend.markRunning(run.id, { startedAt: T0 + HOUR + 300 });
    f.advance(SEC);
    await f.pass();
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'RUNNING', startedAt: T0 + HOUR + 300 });
    expect(f.events('run:running').map((e) => [e.runId, e.message])).toEqual([[run.id, 'running (attempt 1)']]);
  });
});

/** A fixture whose backend's jobs exit 0 the moment they are launched, on the fixture's clock. */
function doneAtOnce(): Fixture {
  const clock = new ManualClock(T0);
  return new Fixture({ clock, backend: new TestBackend('local', { clock, startAs: 'done' }) });
}

describe('settling', () => {
  it('a batch run ends with the backend’s end time and start time, and an event saying how', async () => {
    f = doneAtOnce();
    f.define({ id: 'ok', cron: '0 * * * *' });
    f.define({ id: 'bad', cron: '0 * * * *', command: 'false' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const ok = f.only('ok');
    const bad = f.only('bad');
    f.backend.finish(bad.id, { exitCode: 3, endedAt: T0 + HOUR + 10 });
    f.advance(MIN);
    await f.pass();
    // Never seen running: its start time is the backend's.
    expect(f.run(ok.id)).toMatchObject({ status: 'COMPLETED', startedAt: T0 + HOUR, endedAt: T0 + HOUR, exitCode: 0 });
    expect(f.run(bad.id)).toMatchObject({ status: 'ERROR', reason: 'exit 3', endedAt: T0 + HOUR + 10 });
    expect(f.events('run:completed').map((e) => [e.runId, e.message])).toEqual([[ok.id, 'completed']]);
    expect(f.events('run:failed').map((e) => [e.runId, e.message])).toEqual([[bad.id, 'failed: exit 3']]);
  });

  it('a run that timed out fails with the timeout as its reason even when the process then exits 0', async () => {
    f = new Fixture();
    f.define({ id: 'slow', cron: '0 * * * *', timeout: '1m' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('slow');
    f.backend.cancelBehaviour = 'ignore';
    f.advance(2 * MIN);
    await f.pass();
    expect(f.run(run.id).reason).toBe('timed out after 60s');
    f.backend.finish(run.id, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'ERROR', reason: 'timed out after 60s', exitCode: 0 });
    expect(f.events('run:completed')).toEqual([]);
  });

  it('a job that finished between two polls records the backend’s start and end times and an event', async () => {
    f = doneAtOnce();
    const ok = postJob(f.store, { command: 'work' }, f.now());
    const bad = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    f.backend.finish(`job-${bad.id}`, { exitCode: 2, endedAt: T0 + 7 });
    f.advance(MIN);
    await f.pass();
    expect(f.store.jobs.get(ok.id)).toMatchObject({ status: 'COMPLETED', startedAt: T0, endedAt: T0 });
    expect(f.store.jobs.get(bad.id)).toMatchObject({ status: 'ERROR', reason: 'exit 2', startedAt: T0, endedAt: T0 + 7 });
    expect(f.events('job:completed').map((e) => [e.jobId, e.message])).toEqual([[ok.id, `job ${ok.id} completed`]]);
    expect(f.events('job:failed').map((e) => [e.jobId, e.message])).toEqual([[bad.id, `job ${bad.id} failed: exit 2`]]);
  });

  it('a job cancelled while its process ran ends CANCEL, with no completed event', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    f.store.jobs.cas(job.id, ['FETCHED'], 'CANCEL', { reason: 'cancelled by hand' }, f.now());
    f.backend.finish(`job-${job.id}`, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'CANCEL', reason: 'cancelled by hand' });
    expect(f.events('job:completed')).toEqual([]);
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a realtime run stopped by hand stays STOPPED and keeps how its process ended, with no exit event', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const run = f.only('feed');
    f.advance(SEC);
    await stopRoutine(f.control(), full('feed'));
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'STOPPED', reason: 'stopped by hand', signal: 'SIGTERM' });
    expect(f.events('run:exited')).toEqual([]);
  });

  it('a realtime run that dies ends EXITED at the backend’s end time, with an event saying how', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const run = f.only('feed');
    f.backend.finish(run.id, { exitCode: 1, endedAt: T0 + 10 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'EXITED', reason: 'exit 1', endedAt: T0 + 10 });
    expect(f.events('run:exited').map((e) => [e.runId, e.message, e.data])).toEqual([[run.id, 'exited: exit 1', { exitCode: 1, signal: null, quickDeaths: 1 }]]);
  });

  it('a realtime run put back to wait (unsent) is STARTING again with no reason, and the event says no attempt was spent', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const run = f.only('feed');
    f.backend.poll = async (): Promise<PollState[]> => [{ state: 'unsent', reason: 'start command expired unfetched' }];
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'STARTING', reason: null });
    expect(f.events('run:unsent').map((e) => [e.runId, e.message])).toEqual([[run.id, 'start command expired unfetched; it never ran (attempt 1 not spent)']]);
  });
});

describe('faults', () => {
  it('the finished runs of a pass settle in its transaction with no savepoint, when nothing fails', async () => {
    const clock = new ManualClock(T0);
    const heard: string[] = [];
    f = new Fixture({ clock, backend: new TestBackend('local', { clock, startAs: 'done' }), store: Store.open(':memory:', { trace: (sql) => heard.push(sql) }) });
    for (const id of ['a', 'b', 'c', 'd']) f.define({ id, cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.advance(SEC);
    heard.length = 0;
    expect((await f.pass()).settled).toBe(4);
    expect(['a', 'b', 'c', 'd'].map((id) => f.only(id).status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect(heard.filter((sql) => sql.startsWith('SAVEPOINT'))).toHaveLength(0);
  });

  it('a run whose start cannot be recorded is a check:fault naming it; the runs settled beside it are kept', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.define({ id: 'b', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const a = f.only('a');
    const b = f.only('b');
    f.backend.finish(b.id, { exitCode: 0 });
    f.store.db.exec(`CREATE TRIGGER refuse_a BEFORE UPDATE OF status ON runs WHEN OLD.id = '${a.id}' BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END`);
    f.advance(SEC);
    expect((await f.pass()).settled).toBe(1);
    expect(f.events('check:fault').map((e) => [e.runId, e.message])).toEqual([[a.id, 'refused by a trigger']]);
    expect(f.events('run:running')).toEqual([]);
    expect(f.run(a.id).status).toBe('STARTING');
    expect(f.run(b.id).status).toBe('COMPLETED');
    expect(f.events('run:completed').map((e) => e.runId)).toEqual([b.id]);
  });

  it('one run that cannot be settled is a check:fault naming it; the others settle', async () => {
    f = doneAtOnce();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.define({ id: 'b', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const a = f.only('a');
    const b = f.only('b');
    f.store.db.exec(`CREATE TRIGGER refuse_a BEFORE UPDATE OF status ON runs WHEN OLD.id = '${a.id}' BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END`);
    f.advance(SEC);
    await f.pass();
    expect(f.events('check:fault').map((e) => [e.runId, e.jobId, e.message])).toEqual([[a.id, null, 'refused by a trigger']]);
    expect(f.run(b.id).status).toBe('COMPLETED');
    expect(f.store.ledger.get('run', a.id)).not.toBeNull(); // rolled back: tried again next pass
  });

  it('a job that cannot be settled is a check:fault naming the job', async () => {
    f = doneAtOnce();
    const job = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    f.store.db.exec(`CREATE TRIGGER refuse BEFORE UPDATE OF status ON jobs BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END`);
    f.advance(SEC);
    await f.pass();
    expect(f.events('check:fault').map((e) => [e.runId, e.jobId, e.message])).toEqual([[null, job.id, 'refused by a trigger']]);
  });

  it('work in the ledger whose run is gone is cleared without a fault, whatever the backend says', async () => {
    for (const state of ['running', 'done', 'unsent'] as const) {
      f = new Fixture();
      const id = await oneRunning();
      f.store.db.prepare(`DELETE FROM runs WHERE id = ?`).run(id);
      f.backend.poll = async (): Promise<PollState[]> => [state === 'unsent' ? { state, reason: 'expired' } : state === 'running' ? { state, startedAt: T0, heartbeatAt: null } : { state }];
      f.backend.finish(id);
      f.advance(SEC);
      await f.pass();
      expect({ state, faults: f.events('check:fault') }).toEqual({ state, faults: [] });
      expect({ state, ledger: f.store.ledger.count() }).toEqual({ state, ledger: state === 'running' ? 1 : 0 });
      f.close();
    }
  });
});

describe('micro-pass after an exit', () => {
  it('settles only the run that exited and starts its replacement; other finished work waits for the pass', async () => {
    f = new Fixture();
    f.define({ id: 'a', realtime: true });
    f.define({ id: 'b', realtime: true });
    await f.pass();
    const a = f.only('a');
    const b = f.only('b');
    f.backend.finish(a.id, { exitCode: 1 });
    f.backend.finish(b.id, { exitCode: 1 });
    f.advance(SEC);
    expect(await f.scheduler.settleExited(a.id)).toBe(true);
    expect(f.run(a.id).status).toBe('EXITED');
    expect(f.run(b.id).status).toBe('STARTING');
    expect(f.runs('a').map((r) => r.status)).toEqual(['EXITED', 'STARTING']);
    expect(f.runs('b')).toHaveLength(1);
  });
});

describe('quick deaths', () => {
  /** Start the next instance, see it running, let it live `ms`, and let it die; returns its exit event's count. */
  async function lives(ms: number): Promise<number> {
    let guard = 0;
    while (f.latest('feed').status !== 'STARTING' && guard++ < 100) {
      f.advance(SEC);
      await f.pass();
    }
    const run = f.latest('feed');
    f.advance(SEC);
    await f.pass();
    const started = f.run(run.id).startedAt!;
    f.backend.finish(run.id, { exitCode: 1, endedAt: started + ms });
    f.clock.set(started + ms);
    await f.pass();
    expect(f.run(run.id).status).toBe('EXITED');
    return (f.events('run:exited').at(-1)!.data as { quickDeaths: number }).quickDeaths;
  }

  it('a process up exactly a minute did not die quickly: it is no quick death and breaks the streak', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    expect(await lives(SEC)).toBe(1);
    expect(await lives(QUICK_DEATH_MS)).toBe(0);
    expect(await lives(QUICK_DEATH_MS - 1)).toBe(1);
  });

  it('a death is timed by when the process ended, not by when a pass saw it', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const run = f.only('feed');
    f.advance(SEC);
    await f.pass();
    const started = f.run(run.id).startedAt!;
    f.backend.finish(run.id, { exitCode: 1, endedAt: started + 30 * SEC });
    f.clock.set(started + 5 * MIN);
    await f.pass();
    expect(f.events('run:exited').map((e) => (e.data as { quickDeaths: number }).quickDeaths)).toEqual([1]);
  });

  it('a run started by hand ends the count: deaths before it are not added', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    expect(await lives(SEC)).toBe(1);
    expect(await lives(SEC)).toBe(2); // now in a 1 s backoff, nothing live
    const manual = runNow(f.control(), full('feed'));
    await f.pass();
    expect(f.latest('feed').id).toBe(manual.id);
    expect(await lives(SEC)).toBe(3);
    // The next instance starts at once (the count stops at the manual run) and counts 2.
    expect(f.latest('feed').status).toBe('STARTING');
    expect(await lives(SEC)).toBe(2);
  });
});
