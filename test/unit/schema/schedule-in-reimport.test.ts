// `in:` in a schedule file is resolved once, at the first import, and kept: importing the same
// file again is a no-op (unchanged), and a one-shot that already ran does not run again.
import { afterEach, expect, it } from 'vitest';
import { importSchedule } from '../../../main/engine/ops/schedules.js';
import { COMPUTER, Fixture, MIN, T0 } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f.store.close());

const FILE = `schedule: later\nroutines:\n  - id: ${COMPUTER}:later/once\n    command: "true"\n    in: 10m\n    tz: UTC\n`;

it('re-importing an unchanged file with an in: routine reports it unchanged and keeps its time', async () => {
  f = new Fixture();
  expect(importSchedule(f.store, FILE, f.now())[0]).toMatchObject({ created: [`${COMPUTER}:later/once`] });
  expect(f.trigger('later/once').nextRunAt).toBe(T0 + 10 * MIN);
  f.advance(3 * MIN);
  expect(importSchedule(f.store, FILE, f.now())[0]).toMatchObject({ created: [], updated: [], unchanged: [`${COMPUTER}:later/once`] });
  expect(f.trigger('later/once').nextRunAt).toBe(T0 + 10 * MIN);
});

it('after the one-shot ran, importing the file again does not run it again', async () => {
  f = new Fixture();
  importSchedule(f.store, FILE, f.now());
  f.clock.set(T0 + 10 * MIN);
  await f.pass();
  f.backend.finish(f.latest('later/once').id, { exitCode: 0 });
  await f.pass();
  expect(f.trigger('later/once').state).toBe('fired');
  f.advance(MIN);
  expect(importSchedule(f.store, FILE, f.now())[0]!.unchanged).toHaveLength(1);
  f.advance(20 * MIN);
  await f.pass();
  expect(f.runs('later/once')).toHaveLength(1);
  expect(f.trigger('later/once').state).toBe('fired');
});
