// The check step (scheduler/check.ts) when backends answer oddly: a missing answer is a lost job,
// an unconfigured backend is reported and its work left alone, a heartbeat never moves back, and
// a run ended by hand whose process still runs is asked to stop.
import { afterEach, describe, expect, it } from 'vitest';
import type { PollState } from '../../../main/engine/backend.js';
import { Fixture, HOUR, SEC, T0 } from '../../helpers/engine-fixture.js';

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
