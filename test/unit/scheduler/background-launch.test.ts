// A launch in the background (the daemon's way: a slow backend never holds up the pass) tells the
// engine once the launch is recorded, so the engine can run the next pass at once.
import { afterEach, expect, it } from 'vitest';
import { Scheduler } from '../../../main/engine/scheduler/scheduler.js';
import { Fixture, HOUR, T0 } from '../../helpers/engine-fixture.js';
import { within } from '../../helpers/wait.js';

let f: Fixture;
afterEach(() => f?.close());

it('a background launch calls onLaunched once the launch is recorded (the run STARTING, its job submitted)', async () => {
  f = new Fixture({ options: { launchInBackground: true } });
  f.define({ id: 'etl/load', cron: '0 * * * *' });
  let statusWhenTold: string | null = null;
  let tell = (): void => {};
  const told = new Promise<void>((resolve) => (tell = resolve));
  const scheduler = new Scheduler(f.store, f.clock, new Map([['local', f.backend]]), f.opts, {
    onLaunched: () => {
      statusWhenTold = f.only('etl/load').status;
      tell();
    },
  });
  f.clock.set(T0 + HOUR);
  await scheduler.pass();
  await within(told, 10_000, 'onLaunched');
  expect(statusWhenTold).toBe('STARTING');
  expect(f.backend.job(f.only('etl/load').id).spec.runId).toBe(f.only('etl/load').id);
});
