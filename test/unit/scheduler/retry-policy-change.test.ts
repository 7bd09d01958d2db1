// A retry queued under one retry policy does not outlive it: editing the policy (tend routine
// edit, the API, a schedule import) cancels the attempt waiting under the old one.
import { afterEach, expect, it } from 'vitest';
import { editRoutine } from '../../../main/engine/ops/routines.js';
import { importSchedule } from '../../../main/engine/ops/schedules.js';
import { COMPUTER, Fixture, MIN, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f.store.close());

/** A one-shot that failed once, its second attempt queued a minute later. */
async function queuedRetry(): Promise<string> {
  f = new Fixture();
  f.define({ id: 'once', in: '1m', retry: { every: '1m', for: '1h' }, schedule: 'jobs' });
  f.clock.set(T0 + MIN);
  await f.pass();
  f.backend.finish(f.latest('once').id, { exitCode: 1 });
  await f.pass();
  const retry = f.latest('once');
  expect(retry).toMatchObject({ status: 'PENDING', attempt: 2 });
  return retry.id;
}

it('editing the retry policy cancels the queued retry; it never starts', async () => {
  const id = await queuedRetry();
  editRoutine(f.store, full('once'), { retry: { every: '5m', for: '2h' } }, { now: f.now(), localComputer: COMPUTER });
  expect(f.run(id)).toMatchObject({ status: 'CANCELLED', reason: 'retry policy changed' });
  f.advance(10 * MIN);
  await f.pass();
  expect(f.runs('once').map((r) => r.status)).toEqual(['ERROR', 'CANCELLED']);
});

it('an edit that leaves the retry policy alone keeps the queued retry', async () => {
  const id = await queuedRetry();
  editRoutine(f.store, full('once'), { name: 'renamed' }, { now: f.now(), localComputer: COMPUTER });
  expect(f.run(id).status).toBe('PENDING');
  f.advance(MIN);
  await f.pass();
  expect(f.run(id).status).toBe('STARTING');
});

it('a schedule import that changes the retry policy cancels it too', async () => {
  const id = await queuedRetry();
  const def = f.store.routines.get(full('once'))!;
  const yaml = `schedule: jobs\nroutines:\n  - id: ${def.id}\n    command: "true"\n    in: 1m\n    tz: UTC\n    retry: none\n`;
  importSchedule(f.store, yaml, f.now());
  expect(f.run(id)).toMatchObject({ status: 'CANCELLED', reason: 'retry policy changed' });
});
