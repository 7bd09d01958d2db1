// Pause and resume (ops/routines.ts) move the trigger through its table: pausing a paused trigger
// or resuming a scheduled one is done already and moves nothing (before, a resume of a scheduled
// trigger re-armed it from now, and each repeat logged the move again); an ended trigger refuses
// both, naming its state.
import { afterEach, describe, expect, it } from 'vitest';
import { pauseRoutine, resumeRoutine } from '../../../main/engine/ops/routines.js';
import { Fixture, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

const writtenAt = (id: string): number => f.store.db.prepare('SELECT updated_at FROM triggers WHERE routine_id = ?').pluck().get(full(id)) as number;

describe('pause and resume', () => {
  it('pause, then resume re-armed from the resume time, each logged once', () => {
    f = new Fixture();
    f.define({ id: 'loop', every: '10m' });
    f.advance(MIN);
    expect(pauseRoutine(f.store, full('loop'), f.now())).toMatchObject({ state: 'paused', nextRunAt: T0 + 10 * MIN });
    f.advance(2 * MIN);
    expect(resumeRoutine(f.store, full('loop'), f.now())).toMatchObject({ state: 'scheduled', nextRunAt: T0 + 13 * MIN });
    expect(f.events().map((e) => e.type).filter((t) => t.startsWith('routine:'))).toEqual(['routine:created', 'routine:paused', 'routine:resumed']);
  });

  it('pausing a paused routine moves nothing and logs nothing', () => {
    f = new Fixture();
    f.define({ id: 'loop', every: '10m' });
    pauseRoutine(f.store, full('loop'), f.now());
    const paused = f.trigger('loop');
    f.advance(MIN);
    expect(pauseRoutine(f.store, full('loop'), f.now())).toEqual(paused);
    expect(writtenAt('loop')).toBe(T0);
    expect(f.events('routine:paused')).toHaveLength(1);
  });

  it('resuming a scheduled routine keeps its next run time and logs nothing', () => {
    f = new Fixture();
    f.define({ id: 'loop', every: '10m' });
    const scheduled = f.trigger('loop');
    f.advance(3 * MIN);
    expect(resumeRoutine(f.store, full('loop'), f.now())).toEqual(scheduled);
    expect(f.trigger('loop').nextRunAt).toBe(T0 + 10 * MIN);
    expect(writtenAt('loop')).toBe(T0);
    expect(f.events('routine:resumed')).toEqual([]);
  });

  it('an ended trigger can be neither paused nor resumed, and is left as it is', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z', retry: 'none' });
    f.clock.set(T0 + 30 * MIN);
    await f.pass();
    f.backend.finish(f.only('once').id);
    f.advance(SEC);
    await f.pass();
    const fired = f.trigger('once');
    expect(fired.state).toBe('fired');
    expect(() => pauseRoutine(f.store, full('once'), f.now())).toThrow(`cannot pause ${full('once')}: its trigger is fired (clear it first)`);
    expect(() => resumeRoutine(f.store, full('once'), f.now())).toThrow(`cannot resume ${full('once')}: its trigger is fired (clear it first)`);
    expect(f.trigger('once')).toEqual(fired);
    expect(f.events('routine:paused')).toEqual([]);
  });
});
