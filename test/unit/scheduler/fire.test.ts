// When a due trigger becomes runs (scheduler/fire.ts), driven through the real pass: the retry
// window's start, misfire edges, one-shots and loops after a skipped misfire, triggers that no
// longer fire, overlap with a waiting run, catch-up spacing and a trigger that throws.
import { afterEach, describe, expect, it } from 'vitest';
import type { RoutineDef } from '../../../main/engine/domain/types.js';
import { Fixture, HOUR, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

/** Store a definition as is, past the schema (a row written by another version, or by hand). */
function storeRaw(def: RoutineDef): void {
  f.store.routines.save(def, f.now());
}

describe('the retry window starts at the due time it fired for', () => {
  it('a one-shot that retries keeps its due time, not the firing time, as the window start', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z' });
    f.clock.set(T0 + 30 * MIN + 20 * SEC); // the pass runs 20 s after the due time
    await f.pass();
    expect(f.only('once').scheduledAt).toBe(T0 + 30 * MIN);
    expect(f.trigger('once')).toMatchObject({ firstDueAt: T0 + 30 * MIN, lastFiredAt: T0 + 30 * MIN + 20 * SEC });
  });

  it('a routine without retries leaves it unset', async () => {
    f = new Fixture();
    f.define({ id: 'hourly', cron: '0 * * * *' });
    f.advance(HOUR);
    await f.pass();
    expect(f.runs('hourly')).toHaveLength(1);
    expect(f.trigger('hourly').firstDueAt).toBeNull();
  });

  it('a later firing while a retry is pending keeps the first window start', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', retry: { every: '1m', for: '1h' }, overlap: 'allow' });
    f.advance(10 * MIN);
    await f.pass();
    expect(f.trigger('r').firstDueAt).toBe(T0 + 10 * MIN);
    f.backend.finish(f.only('r').id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass(); // the failure queues a retry; the window stays open
    f.clock.set(T0 + 20 * MIN);
    await f.pass();
    expect(f.runs('r').map((r) => r.scheduledAt)).toContain(T0 + 20 * MIN);
    expect(f.trigger('r').firstDueAt).toBe(T0 + 10 * MIN);
  });

  it('a misfire that runs nothing opens no window', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *', retry: { every: '1m', for: '1h' }, misfire: 'skip' });
    f.clock.set(T0 + 3 * HOUR + 30 * MIN);
    await f.pass();
    expect(f.runs('r')).toEqual([]);
    expect(f.trigger('r')).toMatchObject({ firstDueAt: null, nextRunAt: T0 + 4 * HOUR });
  });
});

describe('misfire: skip on one-shots and loops', () => {
  it('an `every` loop whose missed run is skipped is re-armed from now, so it fires again', async () => {
    f = new Fixture();
    f.define({ id: 'loop', every: '10m', misfire: 'skip' });
    f.clock.set(T0 + 2 * HOUR + 5 * SEC); // asleep through the 09:10 run
    await f.pass();
    expect(f.runs('loop')).toEqual([]);
    expect(f.trigger('loop')).toMatchObject({ state: 'scheduled', nextRunAt: T0 + 2 * HOUR + 5 * SEC + 10 * MIN });
    f.clock.set(T0 + 2 * HOUR + 5 * SEC + 10 * MIN);
    await f.pass();
    expect(f.runs('loop')).toHaveLength(1);
  });

  it('an `every` loop that fires waits for the run to end before it has a next time', async () => {
    f = new Fixture();
    f.define({ id: 'loop', every: '10m', misfire: 'all' });
    f.clock.set(T0 + 2 * HOUR);
    await f.pass();
    expect(f.runs('loop').map((r) => r.scheduledAt)).toEqual([T0 + 10 * MIN]); // one missed run, not one per 10 minutes
    expect(f.trigger('loop').nextRunAt).toBeNull();
    expect(f.events('trigger:misfire')[0]!.message).toBe('missed 1 run time(s) since 2026-01-05T09:10:00.000Z (misfire: all): running 1');
  });

  it('a missed `at` one-shot under skip ends cancelled, with no run and no next time', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z', misfire: 'skip' });
    f.clock.set(T0 + 5 * HOUR);
    await f.pass();
    expect(f.runs('once')).toEqual([]);
    expect(f.trigger('once')).toMatchObject({ state: 'cancelled', nextRunAt: null });
    expect(f.events('trigger:misfire')[0]!.message).toBe('missed 1 run time(s) since 2026-01-05T09:30:00.000Z (misfire: skip): skipped');
  });

  it('a missed `at` one-shot under once still runs, and its trigger stays scheduled until the run ends', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z' });
    f.clock.set(T0 + 5 * HOUR);
    await f.pass();
    expect(f.only('once').scheduledAt).toBe(T0 + 30 * MIN);
    expect(f.trigger('once')).toMatchObject({ state: 'scheduled', nextRunAt: null });
    expect(f.events('trigger:misfire')[0]!.message).toBe('missed 1 run time(s) since 2026-01-05T09:30:00.000Z (misfire: once): running 1');
  });
});

describe('misfire edges', () => {
  it('a run exactly misfire_after late still fires normally; one millisecond more is a misfire', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *', misfire: 'skip' });
    f.clock.set(T0 + HOUR + f.opts.misfireAfterMs);
    await f.pass();
    expect(f.only('r').scheduledAt).toBe(T0 + HOUR);
    expect(f.only('r').notBefore).toBeNull();
    expect(f.events('trigger:misfire')).toEqual([]);

    f.backend.finish(f.only('r').id);
    f.clock.set(T0 + 2 * HOUR + f.opts.misfireAfterMs + 1);
    await f.pass();
    expect(f.runs('r')).toHaveLength(1);
    expect(f.events('trigger:misfire')).toHaveLength(1);
  });

  it('a due time exactly at the pass fires in that pass', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR - 1);
    expect((await f.pass()).fired).toBe(0);
    f.clock.set(T0 + HOUR);
    expect((await f.pass()).fired).toBe(1);
  });

  it('a missed time exactly at the pass counts as missed and is the one run under once', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'once' });
    f.clock.set(T0 + HOUR); // 09:10 … 10:00 missed, 10:00 exactly now
    await f.pass();
    expect(f.only('r').scheduledAt).toBe(T0 + HOUR);
    expect(f.events('trigger:misfire')[0]!.data).toMatchObject({ missed: 6, running: 1 });
  });

  it('all: exactly as many missed as the cap runs them all and counts them exactly', async () => {
    f = new Fixture({ options: { misfireAllCap: 6 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    f.clock.set(T0 + HOUR + 5 * MIN);
    await f.pass();
    expect(f.runs('r').map((r) => r.scheduledAt)).toEqual([1, 2, 3, 4, 5, 6].map((i) => T0 + i * 10 * MIN));
    const e = f.events('trigger:misfire')[0]!;
    expect(e.data).toEqual({ missed: 6, running: 6, policy: 'all' });
    expect(e.message).toBe('missed 6 run time(s) since 2026-01-05T09:10:00.000Z (misfire: all): running 6');
  });

  it('all: one more than the cap drops the oldest', async () => {
    f = new Fixture({ options: { misfireAllCap: 5 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    f.clock.set(T0 + HOUR + 5 * MIN);
    await f.pass();
    expect(f.runs('r').map((r) => r.scheduledAt)).toEqual([2, 3, 4, 5, 6].map((i) => T0 + i * 10 * MIN));
    expect(f.events('trigger:misfire')[0]!.data).toEqual({ missed: 6, running: 5, policy: 'all' });
  });

  it('a cap below 1 is taken as 1', async () => {
    f = new Fixture({ options: { misfireAllCap: 0 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    f.clock.set(T0 + HOUR + 5 * MIN);
    await f.pass();
    expect(f.runs('r').map((r) => r.scheduledAt)).toEqual([T0 + HOUR]);
  });

  it('a downtime just over the first look-back window counts back to the first missed time exactly', async () => {
    f = new Fixture({ options: { misfireAllCap: 100 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    // First due 09:10; now 10:10 + 1 min: the last hour does not reach back to 09:10, two hours do.
    f.clock.set(T0 + HOUR + 11 * MIN);
    await f.pass();
    const e = f.events('trigger:misfire')[0]!;
    expect(e.data).toEqual({ missed: 7, running: 7, policy: 'all' });
    expect(e.message).toMatch(/^missed 7 run time\(s\)/);
  });

  it('a first missed time exactly one look-back window ago is counted exactly', async () => {
    f = new Fixture({ options: { misfireAllCap: 3 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    f.clock.set(T0 + HOUR + 10 * MIN); // first due 09:10, now 10:10: 09:10 … 10:10 missed
    await f.pass();
    expect(f.runs('r').map((r) => r.scheduledAt)).toEqual([50, 60, 70].map((m) => T0 + m * MIN));
    expect(f.events('trigger:misfire')[0]!.message).toBe('missed 7 run time(s) since 2026-01-05T09:10:00.000Z (misfire: all): running 3');
  });

  it('past the first window, enough missed times in it end the count there, as a lower bound', async () => {
    for (const cap of [3, 6]) {
      f = new Fixture({ options: { misfireAllCap: cap } });
      f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
      f.clock.set(T0 + 3 * HOUR + 5 * MIN); // 12:05: the last hour holds 11:10 … 12:00, six times
      await f.pass();
      expect(f.runs('r').map((r) => r.scheduledAt).at(-1)).toBe(T0 + 3 * HOUR);
      expect(f.runs('r')).toHaveLength(cap);
      expect(f.events('trigger:misfire')[0]!.message).toBe(`missed 6+ run time(s) since 2026-01-05T09:10:00.000Z (misfire: all): running ${cap}`);
      f.close();
    }
  });

  it('once after weeks away with a sparse cron still finds the latest time (the window keeps doubling)', async () => {
    f = new Fixture();
    f.define({ id: 'weekly', cron: '0 9 * * 1', misfire: 'once' }); // Mondays 09:00; T0 is one
    f.clock.set(T0 + 21 * 24 * HOUR + HOUR); // three Mondays later, 10:00
    await f.pass();
    expect(f.only('weekly').scheduledAt).toBe(T0 + 21 * 24 * HOUR);
    expect(f.events('trigger:misfire')[0]!.data).toMatchObject({ missed: 3, running: 1 });
  });
});

describe('catch-up runs after downtime are spread out', () => {
  it('the first starts at once, then one every 500 ms, the whole catch-up within a minute', async () => {
    f = new Fixture({ options: { misfireAllCap: 200 } });
    f.define({ id: 'r', cron: '* * * * *', misfire: 'all', overlap: 'allow' });
    f.clock.set(T0 + 200 * MIN + 30 * SEC);
    await f.pass();
    const now = f.now();
    const offsets = f.runs('r').map((r) => (r.notBefore === null ? 0 : r.notBefore - now));
    expect(offsets).toHaveLength(200);
    expect(f.runs('r')[0]!.notBefore).toBeNull();
    expect(offsets.slice(0, 4)).toEqual([0, 500, 1000, 1500]);
    expect(offsets[120]).toBe(60_000);
    expect(offsets.slice(-2)).toEqual([60_000, 60_000]);
  });

  it('the spacing counts across routines in the same pass', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.define({ id: 'b', cron: '0 * * * *' });
    f.clock.set(T0 + 3 * HOUR + 5 * MIN);
    await f.pass();
    const offsets = [f.only('a'), f.only('b')].map((r) => (r.notBefore === null ? 0 : r.notBefore - f.now())).sort((x, y) => x - y);
    expect(offsets).toEqual([0, 500]);
  });

  it('a run on time has no start delay', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.define({ id: 'b', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect([f.only('a').notBefore, f.only('b').notBefore]).toEqual([null, null]);
  });
});

describe('a due trigger that no longer fires is disarmed', () => {
  it('of a routine that became realtime: no run, no next time', async () => {
    f = new Fixture();
    const def = f.define({ id: 'r', cron: '0 * * * *' });
    storeRaw({ ...def, kind: 'realtime', timing: null } as RoutineDef);
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.runs('r').filter((r) => r.kind === 'batch')).toEqual([]);
    expect(f.trigger('r').nextRunAt).toBeNull();
    expect(f.events('trigger:fault')).toEqual([]);
  });

  it('of a batch routine that lost its timing: no run, no next time', async () => {
    f = new Fixture();
    const def = f.define({ id: 'r', cron: '0 * * * *' });
    storeRaw({ ...def, timing: null } as RoutineDef);
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.runs('r')).toEqual([]);
    expect(f.trigger('r').nextRunAt).toBeNull();
    expect(f.events('trigger:fault')).toEqual([]);
  });

  it('of a routine deleted outside Tend (a sqlite3 shell without foreign keys): no run, no fault', async () => {
    f = new Fixture();
    f.define({ id: 'gone', cron: '0 * * * *' });
    f.define({ id: 'kept', cron: '0 * * * *' });
    f.store.db.pragma('foreign_keys = OFF');
    f.store.db.prepare('DELETE FROM routines WHERE id = ?').run(full('gone'));
    f.store.db.prepare(`UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'defs_version'`).run();
    f.store.db.pragma('foreign_keys = ON');
    f.clock.set(T0 + HOUR);
    const report = await f.pass();
    expect(report.fired).toBe(1);
    expect(f.runs('gone')).toEqual([]);
    expect(f.only('kept').scheduledAt).toBe(T0 + HOUR);
    expect(f.events('trigger:fault')).toEqual([]);
    expect(f.store.routines.dueTriggers(T0 + 10 * HOUR, 10).map((t) => t.routineId)).toEqual([full('kept')]);
  });
});

describe('definitions saved while the pass awaits its backends', () => {
  it('a past one-shot added during the check step fires in that pass instead of being disarmed', async () => {
    f = new Fixture();
    f.define({ id: 'busy', cron: '0 * * * *', overlap: 'allow' });
    f.clock.set(T0 + HOUR);
    await f.pass(); // `busy` is in flight, so the next pass polls the backend
    const poll = f.backend.poll.bind(f.backend);
    let added = false;
    f.backend.poll = async (handles) => {
      if (!added) {
        added = true;
        f.define({ id: 'late', at: '2026-01-05T09:59:30Z' }); // e.g. an API call served meanwhile
      }
      return poll(handles);
    };
    f.advance(SEC);
    await f.pass();
    expect(added).toBe(true);
    expect(f.only('late').scheduledAt).toBe(T0 + HOUR - 30 * SEC);
    expect(f.trigger('late')).toMatchObject({ state: 'scheduled', nextRunAt: null, firstDueAt: T0 + HOUR - 30 * SEC });
  });
});

describe('overlap queue-one', () => {
  it('a waiting run that went DELAYED still holds the queue: later times are skipped', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', overlap: 'queue-one', tolerance: '5m' });
    f.advance(10 * MIN);
    await f.pass(); // 09:10 starts
    f.advance(10 * MIN);
    await f.pass(); // 09:20 waits behind it
    const [first, queued] = f.runs('r');
    expect([first!.status, queued!.status]).toEqual(['RUNNING', 'PENDING']);
    f.advance(6 * MIN);
    await f.pass(); // 09:26: the waiting run is past its tolerance
    expect(f.run(queued!.id).status).toBe('DELAYED');
    f.clock.set(T0 + 30 * MIN);
    await f.pass(); // 09:30: one is already waiting
    expect(f.runs('r')).toHaveLength(2);
    const skipped = f.events('run:skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.message).toBe('run time 2026-01-05T09:30:00.000Z skipped: the previous run is still RUNNING (overlap: queue-one)');
  });

  it('with nothing active the run starts under every policy', async () => {
    f = new Fixture();
    f.define({ id: 's', cron: '0 * * * *', overlap: 'skip' });
    f.define({ id: 'q', cron: '0 * * * *', overlap: 'queue-one' });
    f.advance(HOUR);
    await f.pass();
    expect([f.only('s').status, f.only('q').status]).toEqual(['STARTING', 'STARTING']);
    expect(f.events('run:skipped')).toEqual([]);
  });
});

describe('a trigger that throws', () => {
  it('is reported as trigger:fault and the other triggers still fire', async () => {
    f = new Fixture();
    const bad = f.define({ id: 'bad', cron: '0 * * * *' });
    f.define({ id: 'good', cron: '0 * * * *' });
    storeRaw({ ...bad, timing: { mode: 'cron', cron: '99 * * * *' } } as RoutineDef);
    f.clock.set(T0 + 3 * HOUR); // late: the bad one's misfire is noted before it throws
    const report = await f.pass();
    expect(report.fired).toBe(1);
    expect(report.faults).toBe(0);
    expect(f.only('good').status).toBe('STARTING');
    expect(f.runs('bad')).toEqual([]);
    const faults = f.events('trigger:fault');
    expect(faults.map((e) => [e.routineId, e.level])).toEqual([[full('bad'), 'error']]);
    expect(faults[0]!.message).toMatch(/^could not fire: minute: 99 is out of range 0-59/);
    expect(f.events('trigger:misfire').map((e) => e.routineId)).toEqual([full('good')]);
    expect(f.trigger('bad').nextRunAt).toBe(T0 + HOUR);
  });
});
