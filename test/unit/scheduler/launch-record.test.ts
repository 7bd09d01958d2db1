// The launches a pass answers are recorded together (submit.ts recordAll): the runs launched are
// released and entered in the ledger in one statement each, however many they are, and their
// statuses read in one when anything was written since they were claimed; a job, a launch that
// failed and a run stopped while it was being submitted, among them, are each recorded as they were
// one by one.
import { afterEach, expect, it } from 'vitest';
import type { JobSpec } from '../../../main/engine/backend.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

it('eight runs launched are released and entered in the ledger in one statement each, and not read back when nothing was written since they were claimed', async () => {
  let on = false;
  const heard: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => on && heard.push(sql.replace(/\s+/g, ' ')) });
  f = new Fixture({ store });
  for (const id of IDS) f.define({ id, cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  on = true;
  await f.pass();
  on = false;
  const count = (re: RegExp) => heard.filter((s) => re.test(s)).length;
  expect(count(/^DELETE FROM leases\b/)).toBe(1);
  expect(count(/^INSERT INTO ledger\b/)).toBe(1);
  expect(count(/^SELECT (id, )?status FROM runs\b/)).toBe(0);
  for (const id of IDS) {
    const run = f.only(id);
    expect(run.status).toBe('STARTING');
    expect(f.store.ledger.get('run', run.id)).toMatchObject({ backend: 'local', handle: { id: run.id }, submittedAt: T0 + HOUR });
    expect(f.store.ledger.lease('run', run.id)).toBeNull();
  }
  // Told in the order launched.
  expect(f.events('run:submitted').map((e) => e.routineId)).toEqual(IDS.map((id) => full(id)));
});

it('a job, a launch that failed and a run stopped meanwhile, answered with runs launched, are each recorded as before', async () => {
  let on = false;
  const heard: string[] = [];
  f = new Fixture({ store: Store.open(':memory:', { trace: (sql) => on && heard.push(sql) }) });
  for (const id of ['ok1', 'broken', 'stopped', 'ok2']) f.define({ id, cron: '0 * * * *', retry: 'none' });
  const job = postJob(f.store, { command: 'true', computer: 'me@host' }, f.now());
  const submit = f.backend.submit.bind(f.backend);
  f.backend.submit = async (spec: JobSpec) => {
    const run = spec.runId ? f.store.runs.get(spec.runId) : null;
    if (run?.routineId === full('broken')) throw new Error('no such command');
    // Stopped by hand while it was being submitted.
    if (run?.routineId === full('stopped')) f.store.runs.cas(run.id, ['STARTING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
    return submit(spec);
  };
  f.clock.set(T0 + HOUR);
  on = true;
  const report = await f.pass();
  on = false;
  expect(report.faults).toBe(0);
  // The stop written while submitting moved the store's change mark: the statuses are read back.
  expect(heard.filter((sql) => /^SELECT id, status FROM runs\b/.test(sql)).length).toBeGreaterThan(0);

  for (const id of ['ok1', 'ok2', 'stopped']) expect(f.store.ledger.get('run', f.only(id).id)?.handle).toEqual({ id: f.only(id).id });
  expect(f.only('ok1').status).toBe('STARTING');
  expect(f.only('broken')).toMatchObject({ status: 'ERROR', reason: 'no such command' });
  expect(f.store.ledger.get('run', f.only('broken').id)).toBeNull();
  expect(f.events('run:launch-failed').map((e) => e.routineId)).toEqual([full('broken')]);
  expect(f.store.ledger.get('job', String(job.id))).not.toBeNull();
  expect(f.events('job:submitted').map((e) => e.jobId)).toEqual([job.id]);
  expect(f.events('run:submitted').map((e) => e.routineId).sort()).toEqual([full('ok1'), full('ok2'), full('stopped')].sort());
  // Every claim released, whatever its answer.
  for (const id of ['ok1', 'ok2', 'stopped', 'broken']) expect(f.store.ledger.lease('run', f.only(id).id)).toBeNull();
  expect(f.store.ledger.lease('job', String(job.id))).toBeNull();

  // Only the one stopped meanwhile is asked to stop.
  await new Promise((r) => setImmediate(r));
  expect(f.backend.cancelled()).toEqual([f.only('stopped').id]);
  f.advance(SEC);
  await f.pass();
  expect(f.only('stopped')).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand' });
});

it('a run stopped by a listener of an event the claim committed (here a misfire) is read back as stopped and stopped once launched', async () => {
  f = new Fixture();
  f.define({ id: 'late', cron: '0 * * * *', misfire: 'once' });
  // Hours of downtime: firing tells of the misfire in the transaction that claims the run.
  f.clock.set(T0 + 3 * HOUR + 5 * SEC);
  f.scheduler.bus.on('event', (e) => {
    if (e.type !== 'trigger:misfire') return;
    const run = f.only('late');
    f.store.runs.cas(run.id, ['STARTING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
  });
  const report = await f.pass();
  expect(report).toMatchObject({ fired: 1, submitted: 1, faults: 0 });
  await new Promise((r) => setImmediate(r));
  expect(f.backend.cancelled()).toEqual([f.only('late').id]);
  expect(f.only('late')).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand' });
});
