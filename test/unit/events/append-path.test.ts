// One append path: whoever appends — the pass, or an operation handed only a store — writes inside
// its own transaction, and the bus hears the event once that transaction has committed. Listeners
// are isolated: one that throws fails neither an operation nor a pass.
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../../main/engine/events/bus.js';
import { cancelJob, runNow } from '../../../main/engine/ops/control.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { pauseRoutine } from '../../../main/engine/ops/routines.js';
import type { EventRow } from '../../../main/engine/store/events.js';
import { Fixture, scratch } from '../../helpers/engine-fixture.js';
import { waitFor } from '../../helpers/wait.js';

let f: Fixture;
let box: ReturnType<typeof scratch>;
afterEach(() => {
  f?.close();
  box?.remove();
});

function heard(): EventRow[] {
  const got: EventRow[] = [];
  f.scheduler.bus.on('event', (e) => got.push(e));
  return got;
}

describe('operations that write events themselves', () => {
  it('reach the bus: job:posted, run:requested, routine:paused, job:cancelled (they used to be written past it)', async () => {
    box = scratch('tend-append-');
    f = new Fixture({ db: box.db });
    const got = heard();
    const def = f.define({ id: 'reports/daily', runtimes: ['23:00'] });
    const job = postJob(f.store, { command: 'work' }, f.now());
    runNow(f.control(), def.id);
    pauseRoutine(f.store, def.id, f.now());
    await cancelJob(f.control(), job.id);
    expect(got.map((e) => e.type)).toEqual(['routine:created', 'job:posted', 'run:requested', 'routine:paused', 'job:cancelled']);
    expect(got[1]).toMatchObject({ type: 'job:posted', jobId: job.id, level: 'info' });
    // What the bus carries is what the table holds.
    expect(got).toEqual(f.store.events.after(0));
  });
});

describe('publication follows the transaction', () => {
  it('nothing is heard before commit; a rolled-back transaction is never heard; a rolled-back savepoint drops only its own', () => {
    f = new Fixture();
    const got = heard();
    f.store.tx(() => {
      f.store.events.append({ type: 'job:posted', jobId: 1, message: 'outer' }, 1);
      expect(got).toEqual([]);
      expect(() =>
        f.store.tx(() => {
          f.store.events.append({ type: 'job:posted', jobId: 2, message: 'inner, rolled back' }, 1);
          throw new Error('inner fails');
        }),
      ).toThrow('inner fails');
      f.store.tx(() => f.store.events.append({ type: 'job:posted', jobId: 3, message: 'inner, kept' }, 1));
      expect(got).toEqual([]);
    });
    expect(got.map((e) => e.message)).toEqual(['outer', 'inner, kept']);

    expect(() =>
      f.store.tx(() => {
        f.store.events.append({ type: 'job:posted', jobId: 4, message: 'rolled back' }, 1);
        throw new Error('outer fails');
      }),
    ).toThrow('outer fails');
    expect(got.map((e) => e.message)).toEqual(['outer', 'inner, kept']);
    expect(f.store.events.after(0).map((e) => e.message)).toEqual(['outer', 'inner, kept']);

    // Outside a transaction: heard at once.
    f.store.events.append({ type: 'job:posted', jobId: 5, message: 'alone' }, 1);
    expect(got.at(-1)?.message).toBe('alone');
  });
});

describe('a transaction writes its events together as it ends', () => {
  it('ids follow append order across multi-row inserts of every size; what the bus carries is what the table holds', () => {
    f = new Fixture();
    const got = heard();
    f.store.events.append({ type: 'job:posted', jobId: 0, message: 'before' }, 1);
    // 64 + 32 + 8 + 2 + 1 rows kept around two rolled-back savepoints (one at the start, one inside).
    f.store.tx(() => {
      expect(() =>
        f.store.tx(() => {
          f.store.events.append({ type: 'job:posted', jobId: -1, message: 'dropped first' }, 2);
          throw new Error('inner fails');
        }),
      ).toThrow('inner fails');
      for (let i = 1; i <= 107; i++) {
        f.store.events.append({ type: 'job:posted', jobId: i, message: `e${i}` }, 2);
        if (i === 50) {
          expect(() =>
            f.store.tx(() => {
              f.store.events.append({ type: 'job:posted', jobId: -2, message: 'dropped inside' }, 2);
              throw new Error('inner fails');
            }),
          ).toThrow('inner fails');
        }
      }
      expect(got.length).toBe(1);
    });
    f.store.events.append({ type: 'job:posted', jobId: 108, message: 'after' }, 3);
    const stored = f.store.events.after(0, 1000);
    expect(stored.map((e) => e.jobId)).toEqual(Array.from({ length: 109 }, (_, i) => i));
    expect(got).toEqual(stored);
    const ids = stored.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a transaction that rolls back writes none of its events, and the next one numbers on after the last written', () => {
    f = new Fixture();
    f.store.events.append({ type: 'job:posted', jobId: 1, message: 'kept' }, 1);
    expect(() =>
      f.store.tx(() => {
        for (let i = 0; i < 70; i++) f.store.events.append({ type: 'job:posted', jobId: 2, message: 'rolled back' }, 1);
        throw new Error('outer fails');
      }),
    ).toThrow('outer fails');
    f.store.tx(() => f.store.events.append({ type: 'job:posted', jobId: 3, message: 'next' }, 1));
    expect(f.store.events.after(0).map((e) => [e.jobId, e.message])).toEqual([
      [1, 'kept'],
      [3, 'next'],
    ]);
  });
});

describe('listeners are isolated', () => {
  it('a listener that throws fails neither the operation nor the other listeners', () => {
    f = new Fixture();
    f.scheduler.bus.on('event', () => {
      throw new Error('listener breaks');
    });
    const got = heard();
    const job = postJob(f.store, { command: 'work' }, f.now());
    expect(f.store.jobs.status(job.id)).toBe('PENDING');
    expect(got.map((e) => e.type)).toEqual(['job:posted']);
  });

  it('a pass with listeners that throw on every event and every report has no fault, and does its work', async () => {
    f = new Fixture();
    f.scheduler.bus.on('event', () => {
      throw new Error('event listener breaks');
    });
    f.scheduler.bus.on('pass', () => {
      throw new Error('pass listener breaks');
    });
    const got = heard();
    const job = postJob(f.store, { command: 'work' }, f.now());
    const report = await f.pass();
    expect(report.faults).toBe(0);
    expect(f.store.jobs.status(job.id)).toBe('FETCHED');
    expect(f.events('pass:fault')).toEqual([]);
    expect(got.map((e) => e.type)).toEqual(['job:posted', 'job:submitted']);
  });

  it('throws and rejections are reported, once each, by name', async () => {
    const faults: string[] = [];
    const bus = new EventBus((err, name) => faults.push(`${name}: ${(err as Error).message}`));
    const heardToo: number[] = [];
    bus.on('pass', () => {
      throw new Error('sync');
    });
    bus.on('pass', async () => {
      await Promise.resolve();
      throw new Error('async');
    });
    bus.once('pass', (p) => heardToo.push(p.fired));
    bus.on('pass', (p) => heardToo.push(p.fired));
    const report = { at: 0, durationMs: 0, fired: 1, submitted: 0, settled: 0, faults: 0, steps: {} };
    expect(bus.emit('pass', report)).toBe(true);
    expect(bus.emit('pass', { ...report, fired: 2 })).toBe(true);
    await waitFor(() => faults.length === 4, 2000, 'four faults');
    expect(faults.sort()).toEqual(['pass: async', 'pass: async', 'pass: sync', 'pass: sync']);
    expect(heardToo).toEqual([1, 1, 2]);
    expect(bus.emit('event', {} as EventRow)).toBe(false);
  });
});
