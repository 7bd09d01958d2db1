// The order of the pass (seed 001): check before submit, backlog gate before health gate, an
// unhealthy backend pauses its stage and fails nothing, and a pass never throws.
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../main/engine/clock.js';
import { restartRoutine, runNow } from '../../../main/engine/ops/control.js';
import type { PassReport } from '../../../main/engine/scheduler/context.js';
import { TestBackend } from '../../helpers/test-backend.js';
import { Fixture, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

describe('check before submit', () => {
  it('settles a finished job and submits the next one in the same pass (free slots counted after settling)', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'a', cron: '* * * * *' });
    f.define({ id: 'b', cron: '* * * * *' });

    f.advance(MIN);
    const first = await f.pass();
    expect(first.fired).toBe(2);
    expect(first.submitted).toBe(1);
    const [started] = f.backend.submitted();
    const waiting = [...f.runs('a'), ...f.runs('b')].find((r) => r.id !== started)!;
    expect(waiting.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(waiting.id)).toMatch(/no free slot/);

    f.backend.finish(started!, { exitCode: 0 });
    f.backend.clearCalls();
    f.advance(SEC);
    const second = await f.pass();

    expect(second.settled).toBe(1);
    expect(second.submitted).toBe(1);
    expect(f.run(started!).status).toBe('COMPLETED');
    expect(f.run(waiting.id).status).toBe('STARTING');
    // The order inside the pass: poll and fetch the finished one, then gate, then submit.
    expect(f.backend.ops()).toEqual(['poll', 'fetch', 'health', 'submit']);
    expect(f.store.ledger.all().map((e) => e.refId)).toEqual([waiting.id]);
  });

  it('never exceeds max_parallel while earlier jobs are still running', async () => {
    f = new Fixture({ options: { maxParallel: 2 } });
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *', overlap: 'allow' });
    f.advance(MIN);
    await f.pass();
    expect(f.backend.live()).toHaveLength(2);
    f.advance(SEC);
    await f.pass();
    expect(f.backend.live()).toHaveLength(2);
    expect(f.store.ledger.count()).toBe(2);
  });
});

describe('backlog gate before health gate', () => {
  it('never asks a backend with no waiting work for its health', async () => {
    f = new Fixture();
    f.define({ id: 'later', cron: '0 12 * * *' });
    for (let i = 0; i < 3; i++) {
      await f.pass();
      f.advance(10 * SEC);
    }
    expect(f.backend.count('health')).toBe(0);
    expect(f.backend.calls).toEqual([]);
  });

  it('does not ask for health while work is only in flight (polled, not gated)', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    f.backend.clearCalls();
    f.advance(SEC);
    await f.pass();
    expect(f.backend.ops()).toEqual(['poll']);
  });

  it('asks once per pass when there is work, however many items wait', async () => {
    f = new Fixture({ options: { maxParallel: 10 } });
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *' });
    f.backend.setHealth(false, 'down');
    f.advance(MIN);
    await f.pass();
    expect(f.backend.count('health')).toBe(1);
    f.advance(SEC);
    await f.pass();
    expect(f.backend.count('health')).toBe(2);
  });
});

describe('an unhealthy backend pauses its stage', () => {
  it('submits nothing and fails nothing, reports the pause once, and resumes when healthy', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.setHealth(false, 'cluster down');
    f.advance(MIN);
    await f.pass();
    f.advance(SEC);
    await f.pass();
    f.advance(SEC);
    await f.pass();

    expect(f.backend.count('submit')).toBe(0);
    const run = f.only('a');
    expect(run.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(run.id)).toMatch(/backend local paused: cluster down/);
    const paused = f.events('backend:paused');
    expect(paused).toHaveLength(1);
    expect(paused[0]!.message).toContain('cluster down');
    expect(f.events().filter((e) => e.level === 'error')).toEqual([]);

    f.backend.setHealth(true);
    f.advance(SEC);
    const report = await f.pass();
    expect(report.submitted).toBe(1);
    expect(f.run(run.id).status).toBe('STARTING');
    expect(f.events('backend:resumed')).toHaveLength(1);
  });

  it('treats a health check that throws as a pause, not a failure', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.fail('health', 'ssh: connection refused');
    f.advance(MIN);
    const report = await f.pass();
    expect(report.faults).toBe(0);
    expect(f.only('a').status).toBe('PENDING');
    expect(f.events('backend:paused')[0]!.message).toContain('ssh: connection refused');
  });
});

describe('a pass never throws', () => {
  it('a submit that throws ends that run ERROR with the reason; the next pass still works', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.fail('submit', 'spawn ENOENT');
    f.advance(MIN);
    await expect(f.pass()).resolves.toBeDefined();
    const failed = f.only('a');
    expect(failed.status).toBe('ERROR');
    expect(failed.reason).toBe('spawn ENOENT');
    expect(f.events('run:launch-failed')).toHaveLength(1);
    expect(f.trigger('a').lastError).toBe('spawn ENOENT');

    f.backend.succeed();
    f.advance(MIN);
    const report = await f.pass();
    expect(report.submitted).toBe(1);
    expect(f.latest('a').status).toBe('STARTING');
  });

  it('a poll that throws becomes an event; the job is settled by a later pass', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.finish(run.id, { exitCode: 0 });
    f.backend.fail('poll', 'squeue timed out');
    f.advance(SEC);
    await expect(f.pass()).resolves.toBeDefined();
    expect(f.run(run.id).status).toBe('STARTING');
    expect(f.events('backend:poll-failed')[0]!.message).toContain('squeue timed out');
    expect(f.store.ledger.count()).toBe(1);

    f.backend.succeed('poll');
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id).status).toBe('COMPLETED');
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a fetch that throws ends the run ERROR naming the problem', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.finish(run.id, { exitCode: 0 });
    f.backend.fail('fetch', 'manifest.json: unexpected end of JSON');
    f.advance(SEC);
    await expect(f.pass()).resolves.toBeDefined();
    const after = f.run(run.id);
    expect(after.status).toBe('ERROR');
    expect(after.reason).toMatch(/could not read the result: manifest\.json/);
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a store failure inside a step becomes a pass:fault event and the pass resolves', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    const real = f.store.routines.dueTriggers.bind(f.store.routines);
    f.store.routines.dueTriggers = () => {
      throw new Error('disk I/O error');
    };
    f.advance(MIN);
    const report = await f.pass();
    expect(report.faults).toBe(1);
    expect(f.events('pass:fault')[0]!.message).toBe('fire: disk I/O error');
    f.store.routines.dueTriggers = real;
    f.advance(SEC);
    const next = await f.pass();
    expect(next.faults).toBe(0);
    expect(next.submitted).toBe(1);
  });

  it('a job the backend lost ends ERROR with its reason', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.lose(run.id, 'job directory removed');
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'ERROR', reason: 'job directory removed' });
  });
});

describe('the pass report', () => {
  it('times each step and the whole pass, and publishes the report on the bus', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.advance(MIN);
    const published: PassReport[] = [];
    f.scheduler.bus.on('pass', (r) => published.push(r));
    const before = performance.now();
    const report = await f.pass();
    const took = performance.now() - before;
    expect(Object.keys(report.steps)).toEqual(['clock', 'refresh', 'leases', 'check', 'status', 'promote', 'fire', 'submit']);
    const parts = Object.values(report.steps);
    expect(parts.every((ms) => ms >= 0)).toBe(true);
    expect(parts.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(report.durationMs);
    expect(report.durationMs).toBeLessThanOrEqual(took);
    expect(published).toEqual([report]);
  });
});

describe('passes and micro-passes never overlap', () => {
  /** A backend whose next poll waits until `release()`. */
  function holdPoll(): { release: () => void; polling: Promise<void>; polls: () => number } {
    const poll = f.backend.poll.bind(f.backend);
    let release!: () => void;
    let started!: () => void;
    const polling = new Promise<void>((r) => (started = r));
    const gate = new Promise<void>((r) => (release = r));
    let n = 0;
    f.backend.poll = async (handles) => {
      n++;
      started();
      await gate;
      return poll(handles);
    };
    return { release, polling, polls: () => n };
  }

  async function liveFeed(): Promise<string> {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    return f.only('feed').id;
  }

  it('a second pass while one runs is refused', async () => {
    const id = await liveFeed();
    f.backend.finish(id, { exitCode: 1 });
    const { release, polling } = holdPoll();
    const first = f.pass();
    await polling;
    await expect(f.pass()).rejects.toThrow('passes never overlap');
    expect(await f.scheduler.settleExited(id)).toBe(false);
    release();
    await first;
  });

  it('a pass waits for a micro-pass in progress, and so does quiesce; a second micro-pass is refused meanwhile', async () => {
    const id = await liveFeed();
    f.backend.finish(id, { exitCode: 1 });
    const { release, polling, polls } = holdPoll();
    const micro = f.scheduler.settleExited(id);
    await polling;
    expect(await f.scheduler.settleExited(id)).toBe(false);
    let quiet = false;
    const quiesced = f.scheduler.quiesce().then(() => (quiet = true));
    const pass = f.pass();
    await new Promise((r) => setImmediate(r));
    expect(polls()).toBe(1); // the micro-pass's: the pass has not polled yet
    expect(quiet).toBe(false);
    release();
    expect(await micro).toBe(true);
    await quiesced;
    await pass;
    expect(f.runs('feed').map((r) => r.status)).toEqual(['EXITED', 'RUNNING']);
  });
});

describe('the micro-pass after an exit', () => {
  it('leaves a batch run to the pass, and a run not in the ledger alone, without a fault', async () => {
    f = new Fixture();
    f.define({ id: 'etl', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('etl');
    f.backend.finish(run.id, { exitCode: 0 });
    expect(await f.scheduler.settleExited(run.id)).toBe(false);
    expect(f.run(run.id).status).toBe('STARTING');
    await f.pass();
    expect(f.run(run.id).status).toBe('COMPLETED');
    expect(await f.scheduler.settleExited(run.id)).toBe(false);
    expect(await f.scheduler.settleExited('no-such-run')).toBe(false);
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const feed = f.only('feed');
    f.backend.finish(feed.id, { exitCode: 1 });
    await f.pass();
    expect(await f.scheduler.settleExited(feed.id)).toBe(false); // settled by that pass already
    expect(f.events('pass:fault')).toEqual([]);
  });

  it('starts the replacement only: a run waiting for the pass (started by hand) is left to it', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    f.define({ id: 'etl', cron: '0 0 1 1 *' });
    await f.pass();
    const feed = f.only('feed');
    const manual = runNow(f.control(), full('etl'));
    f.backend.finish(feed.id, { exitCode: 1 });
    expect(await f.scheduler.settleExited(feed.id)).toBe(true);
    expect(f.runs('feed').map((r) => r.status)).toEqual(['EXITED', 'STARTING']);
    expect(f.run(manual.id).status).toBe('PENDING');
  });

  it('counts what runs and what is launched in the schedule’s max_parallel: the replacement waits for a slot', async () => {
    const clock = new ManualClock(T0);
    f = new Fixture({ clock, backend: new TestBackend('local', { clock, startAs: 'queued' }) });
    for (const id of ['a', 'b', 'feed']) f.define({ id, realtime: true, schedule: 's' });
    await f.pass();
    f.backend.markRunning(f.only('a').id);
    f.advance(SEC);
    await f.pass(); // a RUNNING, b STARTING in the ledger
    f.store.routines.setScheduleMaxParallel('s', 2);
    await f.pass();
    const feed = f.only('feed');
    f.backend.finish(feed.id, { exitCode: 1 });
    expect(await f.scheduler.settleExited(feed.id)).toBe(true);
    expect(f.runs('feed').map((r) => r.status)).toEqual(['EXITED']);
  });

  it('after a restart by hand, the old instance’s exit starts nothing more: the new one is live', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const old = f.only('feed');
    f.backend.cancelBehaviour = 'ignore';
    await restartRoutine(f.control(), full('feed'));
    await f.pass();
    expect(f.runs('feed')).toHaveLength(2);
    f.backend.finish(old.id, { signal: 'SIGTERM' });
    expect(await f.scheduler.settleExited(old.id)).toBe(true);
    expect(f.runs('feed')).toHaveLength(2);
  });

  it('a store fault in a micro-pass is a pass:fault naming the run, and it answers false', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true });
    await f.pass();
    const feed = f.only('feed');
    f.backend.finish(feed.id, { exitCode: 1 });
    // The realtime restart reads the routine's trigger: a table that is gone is a real SQLite error.
    f.store.db.exec('DROP TABLE triggers');
    expect(await f.scheduler.settleExited(feed.id)).toBe(false);
    expect(f.events('pass:fault').map((e) => [e.runId, e.message])).toEqual([[feed.id, 'micro-pass: no such table: triggers']]);
  });
});

describe('clock jumps', () => {
  it('a wall clock set back is reported as such, from exactly the threshold', async () => {
    f = new Fixture({ options: { clockJumpMs: 10 * SEC } });
    await f.pass();
    f.advance(-10 * SEC);
    await f.pass();
    expect(f.events('clock:jump').map((e) => e.message)).toEqual([
      'wall clock went back by 10s (sleep, resume or clock change): misfire policies apply to what was due',
    ]);
  });

  it('is not watched when no threshold is set', async () => {
    f = new Fixture({ options: { clockJumpMs: undefined } });
    await f.pass();
    f.advance(10 * 60 * MIN);
    await f.pass();
    expect(f.events('clock:jump')).toEqual([]);
  });
});

describe('what the pass keeps between passes', () => {
  it('definitions are read again only when a routine changed', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    await f.pass();
    const defs = f.scheduler.ctx.defs;
    const read = defs.byId;
    await f.pass();
    expect(defs.byId).toBe(read);
    f.define({ id: 'b', cron: '0 * * * *' });
    await f.pass();
    expect(defs.byId).not.toBe(read);
    expect([...defs.byId.keys()]).toEqual([full('a'), full('b')]);
  });

  it('a backend met for the first time is made once and kept; a configured one is never made', async () => {
    const made: string[] = [];
    f = new Fixture({
      makeBackend: (name) => {
        made.push(name);
        return name === 'pool:other@elsewhere' ? new TestBackend(name) : undefined;
      },
    });
    f.define({ id: 'away', cron: '* * * * *', overlap: 'allow', computer: 'other@elsewhere' });
    f.define({ id: 'here', cron: '* * * * *', overlap: 'allow' });
    for (let i = 0; i < 3; i++) {
      f.advance(MIN);
      await f.pass();
    }
    expect(made).toEqual(['pool:other@elsewhere']);
  });

  it('without a deadline a slow backend is waited for', async () => {
    f = new Fixture({ options: { backendTimeoutMs: undefined } });
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.finish(run.id);
    const poll = f.backend.poll.bind(f.backend);
    f.backend.poll = async (handles) => {
      await new Promise((r) => setTimeout(r, 20));
      return poll(handles);
    };
    await f.pass();
    expect(f.run(run.id).status).toBe('COMPLETED');
    expect(f.events('backend:poll-failed')).toEqual([]);
  });

  it('a deadline leaves no timer behind once the call has answered', async () => {
    f = new Fixture({ options: { backendTimeoutMs: 60 * MIN } });
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 3; i++) {
      f.advance(SEC);
      await f.pass();
    }
    expect(timers()).toBe(before);
  });
});
