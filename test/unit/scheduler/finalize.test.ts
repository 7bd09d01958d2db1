// What a finished batch run does to its trigger (scheduler/finalize.ts), through the real pass:
// what a success resets (and that it writes nothing when nothing changes), what a failure records,
// when it retries, that manual runs and paused triggers are left as they are (but a paused
// one-shot takes its attempt's final outcome), and that an ended trigger takes no outcome.
import { afterEach, describe, expect, it } from 'vitest';
import { runNow } from '../../../main/engine/ops/control.js';
import { editRoutine, pauseRoutine, resumeRoutine } from '../../../main/engine/ops/routines.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

const triggerWrittenAt = (id: string): number => f.store.db.prepare('SELECT updated_at FROM triggers WHERE routine_id = ?').pluck().get(full(id)) as number;

/** Fire the routine's next due time and end that run. */
async function fireAndEnd(id: string, at: number, exitCode: number): Promise<void> {
  f.clock.set(at);
  await f.pass();
  f.backend.finish(f.latest(id).id, { exitCode });
  f.advance(SEC);
  await f.pass();
}

describe('a successful run', () => {
  it('of a plain recurring routine leaves its trigger unwritten', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const firedAt = triggerWrittenAt('r');
    f.backend.finish(f.only('r').id);
    f.advance(MIN);
    await f.pass();
    expect(f.only('r').status).toBe('COMPLETED');
    expect(triggerWrittenAt('r')).toBe(firedAt);
  });

  it('of a plain recurring routine reads only whether retry state is left, not the whole trigger', async () => {
    const heard: string[] = [];
    f = new Fixture({ store: Store.open(':memory:', { trace: (sql) => heard.push(sql) }) });
    f.define({ id: 'r', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.backend.finish(f.only('r').id);
    f.advance(MIN);
    heard.length = 0;
    await f.pass();
    expect(f.only('r').status).toBe('COMPLETED');
    expect(heard.filter((sql) => sql.startsWith('SELECT * FROM triggers WHERE routine_id'))).toEqual([]);
    expect(heard.filter((sql) => sql.includes('first_due_at IS NOT NULL FROM triggers'))).toHaveLength(1);
  });

  it('after failures resets the attempt count (and only that changed)', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *' });
    await fireAndEnd('r', T0 + HOUR, 1);
    expect(f.trigger('r')).toMatchObject({ attempts: 1, failCount: 1, lastError: 'exit 1', firstDueAt: null });
    await fireAndEnd('r', T0 + 2 * HOUR, 0);
    expect(f.trigger('r')).toMatchObject({ attempts: 0, failCount: 1, lastError: 'exit 1', state: 'scheduled', nextRunAt: T0 + 3 * HOUR });
  });

  it('of a routine that retries closes its retry window', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *', retry: { every: '1m', for: '10m' } });
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.trigger('r').firstDueAt).toBe(T0 + HOUR);
    f.backend.finish(f.only('r').id);
    f.advance(SEC);
    await f.pass();
    expect(f.trigger('r')).toMatchObject({ firstDueAt: null, attempts: 0, state: 'scheduled' });
  });

  it('of a one-shot without retries marks it fired', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z', retry: 'none' });
    await fireAndEnd('once', T0 + 30 * MIN, 0);
    expect(f.trigger('once')).toMatchObject({ state: 'fired', nextRunAt: null, firstDueAt: null });
  });

  it('of an `every` loop without retries arms the next run from the end', async () => {
    f = new Fixture();
    f.define({ id: 'loop', every: '10m', retry: 'none' });
    await fireAndEnd('loop', T0 + 10 * MIN, 0);
    expect(f.trigger('loop').nextRunAt).toBe(T0 + 10 * MIN + SEC + 10 * MIN);
  });

  it('started by hand changes nothing on the trigger, even of a one-shot', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T12:00:00Z' });
    const before = f.trigger('once');
    const manual = runNow(f.control(), full('once'));
    await f.pass();
    f.backend.finish(manual.id);
    f.advance(SEC);
    await f.pass();
    expect(f.run(manual.id).status).toBe('COMPLETED');
    expect(f.trigger('once')).toEqual(before);
  });
});

describe('a failed run', () => {
  it('started by hand of a one-shot without retries does not fail its trigger', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T12:00:00Z', retry: 'none' });
    const manual = runNow(f.control(), full('once'));
    await f.pass();
    f.backend.finish(manual.id, { exitCode: 2 });
    f.advance(SEC);
    await f.pass();
    expect(f.trigger('once')).toMatchObject({ state: 'scheduled', nextRunAt: Date.parse('2026-01-05T12:00:00Z'), lastError: 'exit 2', failCount: 1 });
  });

  it('of a one-shot without retries fails its trigger at once', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z', retry: 'none' });
    await fireAndEnd('once', T0 + 30 * MIN, 2);
    expect(f.trigger('once')).toMatchObject({ state: 'failed', lastError: 'exit 2', lastErrorAt: T0 + 30 * MIN + SEC, failCount: 1, attempts: 1 });
    expect(f.runs('once')).toHaveLength(1);
  });

  it('of a paused routine is not retried and leaves it paused', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z' });
    f.clock.set(T0 + 30 * MIN);
    await f.pass();
    pauseRoutine(f.store, full('once'), f.now());
    f.backend.finish(f.only('once').id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    expect(f.runs('once')).toHaveLength(1);
    expect(f.trigger('once')).toMatchObject({ state: 'paused', lastError: 'exit 1' });
    expect(f.events('run:retry')).toEqual([]);
  });

  // The trigger table: a paused trigger takes its claimed attempt's outcome. (Before moves went
  // through the table, a paused one-shot whose retries were over stayed paused, and fired again
  // on resume.)
  it('of a paused one-shot whose retries are over fails its trigger, as from scheduled', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z', retry: 'none' });
    f.clock.set(T0 + 30 * MIN);
    await f.pass();
    pauseRoutine(f.store, full('once'), f.now());
    f.backend.finish(f.only('once').id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    expect(f.trigger('once')).toMatchObject({ state: 'failed', lastError: 'exit 1', failCount: 1, attempts: 1 });
    expect(() => resumeRoutine(f.store, full('once'), f.now())).toThrow(/cannot resume .*: its trigger is failed/);
  });

  it('of a paused one-shot that succeeds marks it fired, so resuming cannot run it again', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z' });
    f.clock.set(T0 + 30 * MIN);
    await f.pass();
    pauseRoutine(f.store, full('once'), f.now());
    f.backend.finish(f.only('once').id);
    f.advance(SEC);
    await f.pass();
    expect(f.trigger('once').state).toBe('fired');
  });

  // Terminal triggers absorb every outcome. (Before, a failure by hand wrote its error onto an
  // ended one-shot's trigger.)
  it('started by hand of a one-shot that already fired leaves its trigger as it is', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z', retry: 'none' });
    await fireAndEnd('once', T0 + 30 * MIN, 0);
    const fired = f.trigger('once');
    expect(fired.state).toBe('fired');
    const manual = runNow(f.control(), full('once'));
    await f.pass();
    f.backend.finish(manual.id, { exitCode: 2 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(manual.id).status).toBe('ERROR');
    expect(f.trigger('once')).toEqual(fired);
  });

  it('queues the retry for one delay after the failure and says until when it retries', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 * * * *', retry: { every: '2m', for: '10m' } });
    await fireAndEnd('r', T0 + HOUR, 1);
    const retry = f.latest('r');
    expect(retry).toMatchObject({ status: 'PENDING', attempt: 2, scheduledAt: T0 + HOUR, notBefore: T0 + HOUR + SEC + 2 * MIN, manual: false });
    expect(f.events('run:retry')[0]!.message).toBe('attempt 2 at 2026-01-05T10:02:01.000Z (retry every 120s until 2026-01-05T10:10:00.000Z)');
    expect(f.trigger('r')).toMatchObject({ attempts: 1, state: 'scheduled', firstDueAt: T0 + HOUR });
  });

  it('the last retry that fits the window is queued; one past it is not', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '0 9 * * *', retry: { every: '5m', for: '10m' } });
    f.clock.set(T0 + 24 * HOUR); // day 2, 09:00
    await f.pass();
    f.backend.finish(f.only('r').id, { exitCode: 1 });
    f.clock.set(T0 + 24 * HOUR + 5 * MIN); // a retry at 09:10 is exactly the end of the window
    await f.pass();
    expect(f.latest('r').notBefore).toBe(T0 + 24 * HOUR + 10 * MIN);
    f.clock.set(T0 + 24 * HOUR + 10 * MIN);
    await f.pass();
    f.backend.finish(f.latest('r').id, { exitCode: 1 });
    f.clock.set(T0 + 24 * HOUR + 10 * MIN + 1); // 09:15 + 1 ms would be past it
    await f.pass();
    expect(f.runs('r')).toHaveLength(2);
    expect(f.trigger('r')).toMatchObject({ state: 'scheduled', firstDueAt: null, attempts: 2 });
  });
});

describe('the trigger when its routine changed while the run ran', () => {
  for (const exitCode of [0, 1]) {
    const how = exitCode === 0 ? 'succeeds' : 'fails';

    it(`a cron run that ${how} after its next due time keeps that time, so it still fires`, async () => {
      f = new Fixture();
      f.define({ id: 'r', cron: '0 * * * *', overlap: 'allow' });
      f.clock.set(T0 + HOUR);
      await f.pass();
      f.backend.finish(f.only('r').id, { exitCode, endedAt: T0 + 2 * HOUR - SEC });
      f.clock.set(T0 + 2 * HOUR + SEC); // settled in the pass that fires 11:00
      await f.pass();
      expect(f.runs('r').map((r) => r.scheduledAt)).toEqual([T0 + HOUR, T0 + 2 * HOUR]);
    });

    it(`an every loop edited while its run ${how === 'succeeds' ? 'runs' : 'runs and fails'} keeps the new arming`, async () => {
      f = new Fixture();
      f.define({ id: 'loop', every: '10m', retry: 'none' });
      f.clock.set(T0 + 10 * MIN);
      await f.pass();
      f.advance(2 * MIN);
      editRoutine(f.store, full('loop'), { every: '20m' }, { now: f.now(), localComputer: 'me@host' });
      expect(f.trigger('loop').nextRunAt).toBe(T0 + 32 * MIN);
      f.backend.finish(f.only('loop').id, { exitCode });
      f.advance(3 * MIN);
      await f.pass();
      expect(f.trigger('loop').nextRunAt).toBe(T0 + 32 * MIN);
    });

    it(`an every loop paused while its run ${how === 'succeeds' ? 'runs' : 'runs and fails'} is not re-armed`, async () => {
      f = new Fixture();
      f.define({ id: 'loop', every: '10m', retry: 'none' });
      f.clock.set(T0 + 10 * MIN);
      await f.pass();
      pauseRoutine(f.store, full('loop'), f.now());
      f.backend.finish(f.only('loop').id, { exitCode });
      f.advance(MIN);
      await f.pass();
      expect(f.trigger('loop')).toMatchObject({ state: 'paused', nextRunAt: null });
    });

    it(`a run started by hand that ${how} while the loop's own run is out does not arm the loop (its own run will)`, async () => {
      f = new Fixture();
      f.define({ id: 'loop', every: '10m', retry: 'none', overlap: 'allow' });
      f.clock.set(T0 + 10 * MIN);
      await f.pass();
      const manual = runNow(f.control(), full('loop'));
      await f.pass();
      f.backend.finish(manual.id, { exitCode });
      f.advance(MIN);
      await f.pass();
      expect(f.run(manual.id).status).toBe(exitCode === 0 ? 'COMPLETED' : 'ERROR');
      expect(f.trigger('loop').nextRunAt).toBeNull();
    });

    it(`a run whose routine became realtime ${how} without touching the trigger`, async () => {
      f = new Fixture();
      f.define({ id: 'r', cron: '0 * * * *' });
      f.clock.set(T0 + HOUR);
      await f.pass();
      const run = f.only('r');
      editRoutine(f.store, full('r'), { realtime: true }, { now: f.now(), localComputer: 'me@host' });
      const before = f.trigger('r');
      f.backend.finish(run.id, { exitCode });
      f.advance(SEC);
      await f.pass();
      expect(f.run(run.id).status).toBe(exitCode === 0 ? 'COMPLETED' : 'ERROR');
      expect(f.trigger('r')).toEqual(before);
      expect(f.events('check:fault')).toEqual([]);
    });
  }
});

