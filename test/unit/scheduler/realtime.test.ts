// Realtime routines kept alive: immediate first restart, backoff after quick deaths, crash loop
// gives up until restarted by hand, heartbeat silence stops and restarts.
import { afterEach, describe, expect, it } from 'vitest';
import { restartRoutine, runNow, stopRoutine } from '../../../main/engine/ops/control.js';
import { CRASH_LOOP } from '../../../main/engine/scheduler/check.js';
import { restartDelayMs } from '../../../main/engine/scheduler/supervise.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, MIN, SEC, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

const FEED = 'feeds/collector';

async function started(): Promise<Fixture> {
  f = new Fixture();
  f.define({ id: FEED, realtime: true, command: 'collector' });
  await f.pass();
  return f;
}

describe('restarts after death', () => {
  it('starts a realtime routine with no live instance, and restarts it at once after its first death', async () => {
    await started();
    const first = f.only(FEED);
    expect(first.status).toBe('STARTING');
    expect(f.backend.submitted()).toEqual([first.id]);

    f.advance(SEC);
    await f.pass();
    expect(f.run(first.id).status).toBe('RUNNING');

    f.backend.finish(first.id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(first.id)).toMatchObject({ status: 'EXITED', reason: 'exit 1' });
    const second = f.latest(FEED);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('STARTING');
    expect(f.backend.submitted()).toEqual([first.id, second.id]);
  });

  it('a new instance is written once: inserted STARTING on its backend and in its directory, not updated before it is submitted', async () => {
    const writes: string[] = [];
    f = new Fixture({ store: Store.open(':memory:', { trace: (sql) => /^\s*(INSERT INTO|UPDATE) runs\b/.test(sql) && writes.push(sql.trim().split(' ')[0]!) }) });
    f.define({ id: FEED, realtime: true, command: 'collector' });
    writes.length = 0;
    await f.pass();
    const first = f.only(FEED);
    expect(first).toMatchObject({ status: 'STARTING', backend: 'local', runDir: expect.stringContaining(first.id) });
    expect(f.backend.job(first.id).spec.runDir).toBe(first.runDir);
    expect(writes).toEqual(['INSERT']);
  });

  it('backs off after repeated quick deaths (0, 1 s, 2 s, 4 s), then gives up: ERROR crash loop', async () => {
    await started();
    const waits: number[] = [];
    for (let death = 1; death <= CRASH_LOOP; death++) {
      const run = f.latest(FEED);
      f.backend.finish(run.id, { exitCode: 1 });
      await f.pass();
      const diedAt = f.now();
      if (death === CRASH_LOOP) {
        expect(f.run(run.id).status).toBe('ERROR');
        expect(f.run(run.id).reason).toMatch(/^crash loop: 5 quick deaths in a row, last: exit 1/);
        break;
      }
      expect(f.run(run.id).status).toBe('EXITED');
      // Step the clock 250 ms at a time until the next instance is submitted.
      let guard = 0;
      while (f.latest(FEED).id === run.id && guard++ < 1000) {
        f.advance(250);
        await f.pass();
      }
      waits.push(f.latest(FEED).id === run.id ? Infinity : f.now() - diedAt);
      if (death === 1) expect(f.scheduler.waitReasons().get(full(FEED))).toBeUndefined();
    }
    // The first restart happens in the very pass that settles the death.
    expect(waits).toEqual([0, 1000, 2000, 4000]);
    expect(f.events('routine:crash-loop').map((e) => e.message)).toEqual(['gave up after 5 quick deaths (last: exit 1); restart it by hand']);

    const submits = f.backend.count('submit');
    f.advance(HOUR);
    await f.pass();
    f.advance(HOUR);
    await f.pass();
    expect(f.backend.count('submit')).toBe(submits);
    expect(f.runs(FEED)).toHaveLength(CRASH_LOOP);
  });

  it('the backoff doubles from 1 s and is capped at 60 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 20].map(restartDelayMs)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  });

  it('a death after a long run is not quick: restarted at once, the streak starts over', async () => {
    await started();
    for (let i = 0; i < CRASH_LOOP + 2; i++) {
      const run = f.latest(FEED);
      f.advance(SEC);
      await f.pass(); // observed RUNNING
      f.advance(2 * MIN);
      f.backend.finish(run.id, { exitCode: 1 });
      await f.pass();
      expect(f.run(run.id).status).toBe('EXITED');
      expect(f.latest(FEED).id).not.toBe(run.id);
    }
    expect(f.events('routine:crash-loop')).toEqual([]);
  });

  async function crashLoop(): Promise<void> {
    await started();
    for (let i = 0; i < CRASH_LOOP; i++) {
      f.backend.finish(f.latest(FEED).id, { exitCode: 1 });
      await f.pass();
      f.advance(10 * SEC); // past any backoff, well within a quick death
      await f.pass();
    }
    expect(f.latest(FEED).status).toBe('ERROR');
  }

  it('after a crash loop, runNow starts it again and a new quick death restarts at once', async () => {
    await crashLoop();
    const manual = runNow(f.control(), full(FEED));
    await f.pass();
    expect(f.backend.submitted().at(-1)).toBe(manual.id);
    expect(f.run(manual.id).status).toBe('STARTING');

    f.backend.finish(manual.id, { exitCode: 1 });
    await f.pass();
    expect(f.run(manual.id).status).toBe('EXITED');
    expect(f.latest(FEED).id).not.toBe(manual.id);
    expect(f.latest(FEED).status).toBe('STARTING');
  });

  it('after a crash loop, restart by hand starts it again', async () => {
    await crashLoop();
    const { started: run } = await restartRoutine(f.control(), full(FEED));
    await f.pass();
    expect(f.run(run.id).status).toBe('STARTING');
    expect(f.backend.submitted().at(-1)).toBe(run.id);
  });

  it('stopped by hand stays stopped', async () => {
    await started();
    const run = f.only(FEED);
    const stopped = await stopRoutine(f.control(), full(FEED));
    expect(stopped.map((r) => r.status)).toEqual(['STOPPED']);
    expect(f.backend.cancelled()).toEqual([run.id]);
    f.advance(SEC);
    await f.pass();
    f.advance(HOUR);
    await f.pass();
    expect(f.runs(FEED).map((r) => r.status)).toEqual(['STOPPED']);
    expect(f.store.ledger.count()).toBe(0);
  });
});

describe('heartbeat silence', () => {
  async function withHeartbeat(): Promise<string> {
    f = new Fixture();
    f.define({ id: FEED, realtime: true, command: 'collector', heartbeat: '10s', grace: '45s' });
    await f.pass();
    const run = f.only(FEED);
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id).status).toBe('RUNNING');
    return run.id;
  }

  it('past the startup grace, silence longer than the interval stops the instance (cancel) and restarts it', async () => {
    const id = await withHeartbeat();
    const start = f.run(id).startedAt!;
    // Silent, but still inside the startup grace.
    f.clock.set(start + 44 * SEC);
    await f.pass();
    expect(f.backend.cancelled()).toEqual([]);

    f.clock.set(start + 46 * SEC);
    await f.pass();
    expect(f.backend.calls.filter((c) => c.op === 'cancel')).toEqual([{ op: 'cancel', id, graceMs: f.opts.killGraceMs }]);
    expect(f.events('run:silent')[0]!.message).toMatch(/heartbeat silent for 46s \(interval 10s\); restarting/);

    f.advance(SEC);
    await f.pass();
    const old = f.run(id);
    expect(old.status).toBe('EXITED');
    expect(old.reason).toMatch(/^heartbeat silent/);
    const next = f.latest(FEED);
    expect(next.id).not.toBe(id);
    expect(next.status).toBe('STARTING');
    expect(f.backend.submitted()).toEqual([id, next.id]);
  });

  it('uses the heartbeat the backend reports: an old heartbeatAt past the interval is silence', async () => {
    const id = await withHeartbeat();
    const start = f.run(id).startedAt!;
    // Heartbeats every 5 s for two minutes: never silent.
    for (let t = 5 * SEC; t <= 2 * MIN; t += 5 * SEC) {
      f.clock.set(start + t);
      f.backend.heartbeat(id, start + t);
      await f.pass();
    }
    expect(f.backend.cancelled()).toEqual([]);
    expect(f.run(id).heartbeatAt).toBe(start + 2 * MIN);

    // Then the backend keeps reporting "running" with the old heartbeat.
    f.clock.set(start + 2 * MIN + 10 * SEC);
    await f.pass();
    expect(f.backend.cancelled()).toEqual([]);
    f.clock.set(start + 2 * MIN + 11 * SEC);
    await f.pass();
    expect(f.backend.cancelled()).toEqual([id]);
  });

  it('silence kills are not quick deaths: a collector that never beats is restarted each time, never a crash loop', async () => {
    await withHeartbeat();
    for (let kill = 1; kill <= CRASH_LOOP + 2; kill++) {
      const run = f.latest(FEED);
      if (f.run(run.id).status === 'STARTING') {
        f.advance(SEC);
        await f.pass();
      }
      // Each instance lives 46 s, under the minute that makes a death quick, and never beats.
      f.clock.set(f.run(run.id).startedAt! + 46 * SEC);
      await f.pass();
      f.advance(SEC);
      await f.pass();
      expect(f.run(run.id)).toMatchObject({ status: 'EXITED' });
      expect(f.run(run.id).reason).toMatch(/^heartbeat silent/);
      expect(f.latest(FEED).id).not.toBe(run.id); // restarted at once, no backoff
    }
    expect(f.events('routine:crash-loop')).toHaveLength(0);
    expect(f.events('run:exited').map((e) => (e.data as { quickDeaths: number }).quickDeaths)).toEqual(Array(CRASH_LOOP + 2).fill(0));
    // A real death after them starts its own count at 1.
    const run = f.latest(FEED);
    f.advance(SEC);
    await f.pass();
    f.backend.finish(run.id, { exitCode: 1 });
    await f.pass();
    expect(f.events('run:exited').at(-1)!.data).toMatchObject({ quickDeaths: 1 });
  });

  it('a process that ignores TERM is asked once, not every pass', async () => {
    const id = await withHeartbeat();
    f.backend.cancelBehaviour = 'ignore';
    for (let i = 0; i < 5; i++) {
      f.advance(MIN);
      await f.pass();
    }
    expect(f.backend.cancelled()).toEqual([id]);
    expect(f.runs(FEED)).toHaveLength(1);
  });
});
