// A launch in the background (the daemon's way: a slow backend never holds up the pass) tells the
// engine once the launch is recorded, so the engine can run the next pass at once.
import { afterEach, expect, it } from 'vitest';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { Launches } from '../../../main/engine/scheduler/launches.js';
import { Scheduler } from '../../../main/engine/scheduler/scheduler.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, T0, full } from '../../helpers/engine-fixture.js';
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

it('launches answered in the same turn are recorded in one transaction, and the engine told once', async () => {
  let on = false;
  const heard: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => on && heard.push(sql) });
  f = new Fixture({ store, options: { launchInBackground: true } });
  let told = 0;
  const scheduler = new Scheduler(f.store, f.clock, new Map([['local', f.backend]]), f.opts, { onLaunched: () => told++ });
  for (const id of ['a', 'b', 'c', 'd']) f.define({ id, cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  await scheduler.pass();
  on = true;
  await Promise.all([...scheduler.ctx.launches.launching.values()].map((l) => l.done));
  on = false;
  expect(heard.filter((s) => s.startsWith('BEGIN')).length).toBe(1);
  expect(told).toBe(1);
  expect(scheduler.ctx.launches.launching.size).toBe(0);
  for (const id of ['a', 'b', 'c', 'd']) expect(f.store.ledger.get('run', f.only(id).id)?.handle).toEqual({ id: f.only(id).id });
  expect(f.events('run:submitted')).toHaveLength(4);
});

it('a launch among those answered together that cannot be recorded is a submit:fault of its own; the others are recorded', async () => {
  f = new Fixture({ options: { launchInBackground: true } });
  const scheduler = new Scheduler(f.store, f.clock, new Map([['local', f.backend]]), f.opts);
  for (const id of ['a', 'b', 'c']) f.define({ id, cron: '0 * * * *' });
  f.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON ledger WHEN (SELECT routine_id FROM runs WHERE id = NEW.ref_id) = '${full('b')}' BEGIN SELECT RAISE(ABORT, 'ledger refused'); END`);
  f.clock.set(T0 + HOUR);
  await scheduler.pass();
  await Promise.all([...scheduler.ctx.launches.launching.values()].map((l) => l.done));
  const refused = f.only('b').id;
  expect(f.events('submit:fault').map((e) => [e.runId, e.jobId, e.message])).toEqual([[refused, null, 'could not record the launch: ledger refused']]);
  const recorded = ['a', 'b', 'c'].map((id) => f.only(id).id).filter((id) => f.store.ledger.get('run', id));
  expect(recorded).toHaveLength(2);
  expect(recorded).not.toContain(refused);
  expect(f.store.ledger.lease('run', refused)).not.toBeNull(); // rolled back: it goes stale and is adopted later
});

it("a job's launch that cannot be recorded is a submit:fault naming the job", async () => {
  f = new Fixture({ options: { launchInBackground: true } });
  const scheduler = new Scheduler(f.store, f.clock, new Map([['local', f.backend]]), f.opts);
  const job = postJob(f.store, { command: 'work' }, f.now());
  f.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON ledger WHEN NEW.kind = 'job' BEGIN SELECT RAISE(ABORT, 'ledger refused'); END`);
  await scheduler.pass();
  await Promise.all([...scheduler.ctx.launches.launching.values()].map((l) => l.done));
  expect(f.events('submit:fault').map((e) => [e.runId, e.jobId, e.message])).toEqual([[null, job.id, 'could not record the launch: ledger refused']]);
  expect(f.store.ledger.lease('job', String(job.id))).not.toBeNull();
});

it('a failure while recording launches answered together is reported, not thrown from the immediate, and the launch still resolves', async () => {
  const launches = new Launches();
  const wrote: number[][] = [];
  const written = [1, 2].map((n) =>
    launches.gather(n, (items: number[]) => {
      wrote.push([...items]);
      throw new Error('told nobody');
    }),
  );
  const stderr = process.stderr.write.bind(process.stderr);
  const heard: string[] = [];
  process.stderr.write = ((s: string) => (heard.push(String(s)), true)) as typeof process.stderr.write;
  try {
    await Promise.all(written);
  } finally {
    process.stderr.write = stderr;
  }
  expect(wrote).toEqual([[1, 2]]);
  expect(heard.join('')).toMatch(/recording launches failed: Error: told nobody/);
});
