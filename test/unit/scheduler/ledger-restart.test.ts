// The ledger is the restart mechanism (seed 001): a handle is recorded at the submit boundary, in the
// same transaction that completes the claim; a recorded handle is re-polled, never re-submitted; a
// crash between claim and record costs a stale lease, not a second launch.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../main/engine/clock.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, MIN, SEC, T0, scratch } from '../../helpers/engine-fixture.js';
import { TestBackend } from '../../helpers/test-backend.js';

let dir: ReturnType<typeof scratch>;
const open: Fixture[] = [];
beforeEach(() => {
  dir = scratch();
});
afterEach(() => {
  for (const f of open.splice(0)) f.close();
  dir.remove();
});

function fixture(o: ConstructorParameters<typeof Fixture>[0] = {}): Fixture {
  const f = new Fixture(o);
  open.push(f);
  return f;
}

describe('the handle is recorded with the claim completion', () => {
  it('after the pass the run is STARTING, its ledger row holds the handle, and its lease is gone', async () => {
    const f = fixture({ db: dir.db });
    f.define({ id: 'a', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    const run = f.only('a');
    expect(run.status).toBe('STARTING');
    expect(run.backend).toBe('local');
    expect(run.runDir).toMatch(new RegExp(`runs/2026-01-05/${run.id}$`));
    const entry = f.store.ledger.get('run', run.id);
    expect(entry).toMatchObject({ kind: 'run', refId: run.id, backend: 'local', handle: { id: run.id }, submittedAt: T0 + MIN });
    expect(f.store.ledger.lease('run', run.id)).toBeNull();
    expect(f.backend.job(run.id).spec).toMatchObject({ runId: run.id, kind: 'run', command: 'true', runDir: run.runDir });
  });

  it('if recording fails, the lease release rolls back with it: the claim goes stale and the resubmission launches nothing new', async () => {
    const f = fixture({ db: dir.db });
    f.define({ id: 'a', cron: '0 * * * *' });
    // Runs launched are entered in the ledger together (recordRuns).
    const record = f.store.ledger.recordRuns.bind(f.store.ledger);
    let failures = 1;
    f.store.ledger.recordRuns = (...args) => {
      if (failures-- > 0) throw new Error('SQLITE_FULL: database or disk is full');
      record(...args);
    };
    f.advance(60 * MIN);
    const report = await f.pass();
    expect(report.faults).toBe(1);
    const run = f.only('a');
    expect(f.backend.launches()).toBe(1);
    // Same transaction: neither the ledger row nor the lease release happened.
    expect(f.store.ledger.get('run', run.id)).toBeNull();
    expect(f.store.ledger.lease('run', run.id)).toMatchObject({ owner: 'test-owner' });
    expect(run.status).toBe('STARTING');

    // While the lease is fresh, nobody touches the run.
    f.advance(30 * SEC);
    await f.pass();
    expect(f.backend.count('submit')).toBe(1);

    // Once stale, it is released and the run resubmitted under the same id: same job, no second launch.
    f.advance(f.opts.leaseTimeoutMs);
    await f.pass();
    expect(f.events('lease:released')).toHaveLength(1);
    expect(f.backend.submitted()).toEqual([run.id, run.id]);
    expect(f.backend.launches()).toBe(1);
    expect(f.store.ledger.get('run', run.id)?.handle).toEqual({ id: run.id });

    f.backend.finish(run.id, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id).status).toBe('COMPLETED');
  });
});

describe('a crash between claim and record', () => {
  it('does not launch the run twice: a new scheduler on the same file waits for the lease, then finds the same job', async () => {
    const clock = new ManualClock(T0);
    const backend = new TestBackend('local', { clock });
    const a = fixture({ db: dir.db, clock, backend, options: { owner: 'process-a' } });
    a.define({ id: 'a', cron: '0 * * * *' });
    a.advance(60 * MIN);

    backend.submitMode = 'hang';
    const launched = backend.nextLaunch();
    void a.pass(); // process A dies inside submit: its pass never finishes
    const spec = await launched;
    backend.submitMode = 'normal';

    const b = fixture({ db: dir.db, clock, backend, options: { owner: 'process-b' } });
    const run = b.only('a');
    expect(run.id).toBe(spec.runId);
    expect(run.status).toBe('STARTING');
    expect(b.store.ledger.get('run', run.id)).toBeNull();
    expect(b.store.ledger.lease('run', run.id)?.owner).toBe('process-a');

    // B before the lease is stale: the run is claimed by A, B leaves it alone.
    clock.advance(10 * SEC);
    await b.pass();
    expect(backend.count('submit')).toBe(1);

    // B after the lease timeout: released, resubmitted under the same run id, recorded, never relaunched.
    clock.advance(b.opts.leaseTimeoutMs);
    await b.pass();
    expect(b.events('lease:released')[0]!.message).toContain('process-a');
    expect(backend.submitted()).toEqual([run.id, run.id]);
    expect(backend.launches()).toBe(1);
    expect(b.store.ledger.get('run', run.id)?.handle).toEqual({ id: run.id });
    expect(b.store.ledger.lease('run', run.id)).toBeNull();

    backend.finish(run.id, { exitCode: 0 });
    clock.advance(SEC);
    await b.pass();
    expect(b.run(run.id).status).toBe('COMPLETED');
    expect(b.events('run:completed')).toHaveLength(1);
    expect(backend.launches()).toBe(1);
  });
});

describe('a recorded handle is re-polled, never re-submitted', () => {
  it('a new scheduler on the same SQLite file polls the existing handle and settles it', async () => {
    const clock = new ManualClock(T0);
    const backend = new TestBackend('local', { clock });
    const a = fixture({ db: dir.db, clock, backend });
    a.define({ id: 'a', cron: '0 * * * *' });
    a.advance(60 * MIN);
    await a.pass();
    const run = a.only('a');
    a.close(); // the process exits; the job keeps running unsupervised

    clock.advance(5 * MIN);
    const b = fixture({ store: Store.open(dir.db), clock, backend, options: { owner: 'process-b' } });
    backend.clearCalls();
    await b.pass();
    expect(backend.calls).toEqual([{ op: 'poll', ids: [run.id] }]);
    expect(b.run(run.id).status).toBe('RUNNING');

    backend.finish(run.id, { exitCode: 0 });
    clock.advance(5 * MIN);
    const report = await b.pass();
    expect(report.settled).toBe(1);
    expect(b.run(run.id)).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    expect(backend.count('submit')).toBe(0);
    expect(backend.launches()).toBe(1);
    expect(b.store.ledger.count()).toBe(0);
  });

  it('a run that finished while nobody was watching settles on the first pass after restart', async () => {
    const clock = new ManualClock(T0);
    const backend = new TestBackend('local', { clock });
    const a = fixture({ db: dir.db, clock, backend });
    a.define({ id: 'a', cron: '0 * * * *' });
    a.advance(60 * MIN);
    await a.pass();
    const run = a.only('a');
    a.close();
    backend.finish(run.id, { exitCode: 2 });

    clock.advance(MIN);
    const b = fixture({ db: dir.db, clock, backend });
    await b.pass();
    expect(b.run(run.id)).toMatchObject({ status: 'ERROR', exitCode: 2, reason: 'exit 2' });
    expect(backend.submitted()).toEqual([run.id]);
  });
});
