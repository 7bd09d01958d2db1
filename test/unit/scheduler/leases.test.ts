// Leases, not locks (seed 001): stale claims return to their queue unless a live ledger entry owns
// the item; claims are atomic; replaying a completion is a no-op.
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../main/engine/clock.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { settle } from '../../../main/engine/scheduler/check.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, MIN, SEC, T0, scratch } from '../../helpers/engine-fixture.js';
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

describe('stale leases', () => {
  it('a claim by a process that died returns the job to its queue, and it is submitted under the same id', async () => {
    const f = fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    // Another process claimed it (FETCHED) and died before submitting.
    f.store.tx(() => {
      f.store.ledger.claim('job', String(job.id), 'pid:4242', f.now());
      f.store.jobs.cas(job.id, ['PENDING'], 'FETCHED', {}, f.now());
    });

    f.advance(30 * SEC);
    await f.pass();
    expect(f.store.jobs.status(job.id)).toBe('FETCHED');
    expect(f.backend.count('submit')).toBe(0);

    f.advance(f.opts.leaseTimeoutMs);
    await f.pass();
    const released = f.events('lease:released');
    expect(released).toHaveLength(1);
    expect(released[0]).toMatchObject({ jobId: job.id, level: 'warn' });
    expect(released[0]!.message).toContain('pid:4242');
    expect(f.backend.submitted()).toEqual([`job-${job.id}`]);
    expect(f.store.jobs.status(job.id)).toBe('FETCHED');
    expect(f.store.ledger.get('job', String(job.id))).not.toBeNull();
    expect(f.store.ledger.lease('job', String(job.id))).toBeNull();
  });

  it('never sweeps a lease whose item has a ledger entry (a slow job is not an abandoned one)', async () => {
    const f = fixture();
    const slow = postJob(f.store, { command: 'slow' }, f.now());
    await f.pass();
    expect(f.store.ledger.get('job', String(slow.id))).not.toBeNull();
    // An old claim on the in-flight job, and one on an item nobody owns.
    f.store.ledger.claim('job', String(slow.id), 'pid:1', T0 - HOUR);
    f.store.ledger.claim('run', 'orphan-run', 'pid:1', T0 - HOUR);

    f.advance(5 * MIN);
    await f.pass();
    expect(f.store.ledger.lease('job', String(slow.id))).not.toBeNull();
    expect(f.store.ledger.lease('run', 'orphan-run')).toBeNull();
    expect(f.events('lease:released').map((e) => e.runId)).toEqual(['orphan-run']);
    expect(f.store.jobs.status(slow.id)).toBe('RUNNING');
    expect(f.backend.count('submit')).toBe(1);
  });
});

describe('whose claims are stale', () => {
  /** A job claimed (FETCHED) by `owner` at `at`, never recorded in the ledger. */
  function claimed(f: Fixture, owner: string, at = f.now()): number {
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.store.tx(() => {
      f.store.ledger.claim('job', String(job.id), owner, at);
      f.store.jobs.cas(job.id, ['PENDING'], 'FETCHED', {}, f.now());
    });
    return job.id;
  }
  const held = (f: Fixture, id: number) => f.store.ledger.lease('job', String(id)) !== null;

  it('a claim exactly the lease timeout old is kept; a millisecond more and it is released, as a job event', async () => {
    const f = fixture();
    const id = claimed(f, 'someone-else');
    f.advance(f.opts.leaseTimeoutMs);
    await f.pass();
    expect(held(f, id)).toBe(true);
    expect(f.events('pass:fault')).toEqual([]);
    f.advance(1);
    await f.pass();
    expect(held(f, id)).toBe(false);
    expect(f.events('lease:released').map((e) => [e.runId, e.jobId, e.message])).toEqual([
      [null, id, `stale claim by someone-else from ${new Date(T0).toISOString()} released`],
    ]);
  });

  it('a claim of a scheduler process of this host that is gone is released at once; one that lives is kept', async () => {
    const f = fixture();
    const gone = spawnSync('true').pid!;
    const dead = claimed(f, `pid:${gone}:n1`);
    const parent = claimed(f, `pid:${process.ppid}:n2`);
    const self = claimed(f, `pid:${process.pid}:another-nonce`);
    const lookalike = claimed(f, `user@pid:${gone}:host`); // a worker host, not a local process
    f.advance(SEC);
    await f.pass();
    expect([held(f, dead), held(f, parent), held(f, self), held(f, lookalike)]).toEqual([false, true, true, true]);
    expect(f.events('pass:fault')).toEqual([]);
  });

  it('a worker host that is away keeps its claims past the timeout: it may be running them', async () => {
    const f = fixture();
    const W = 'user@WORKER';
    f.store.pool.seen(W, f.now(), {});
    const id = claimed(f, W);
    f.advance(f.opts.leaseTimeoutMs + MIN);
    await f.pass();
    expect(held(f, id)).toBe(true);
    f.store.pool.seen(W, f.now(), {});
    f.advance(SEC);
    await f.pass();
    expect(held(f, id)).toBe(false);
  });

  it('our own launch still in flight keeps its claim however old', async () => {
    const f = fixture({ options: { launchInBackground: true } });
    f.backend.submitMode = 'hang';
    f.define({ id: 'etl', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    const launched = f.backend.nextLaunch();
    await f.pass();
    await launched;
    const run = f.only('etl');
    f.advance(f.opts.leaseTimeoutMs + MIN);
    await f.pass();
    expect(f.store.ledger.lease('run', run.id)).not.toBeNull();
    expect(f.events('lease:released')).toEqual([]);
  });
});

describe('claims are atomic', () => {
  it('two connections claiming the same item: exactly one wins', () => {
    const a = Store.open(dir.db);
    const b = Store.open(dir.db);
    try {
      const results = [a.ledger.claim('run', 'r1', 'a', T0), b.ledger.claim('run', 'r1', 'b', T0 + 1)];
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(results[0]).toBe(true);
      expect(b.ledger.lease('run', 'r1')).toMatchObject({ owner: 'a', claimedAt: T0 });
      a.ledger.release('run', 'r1');
      expect(b.ledger.claim('run', 'r1', 'b', T0 + 2)).toBe(true);
    } finally {
      a.close();
      b.close();
    }
  });

  it('two schedulers on the same file racing for the same due run launch it once', async () => {
    const clock = new ManualClock(T0);
    const backend = new TestBackend('local', { clock });
    const a = fixture({ db: dir.db, clock, backend, options: { owner: 'a' } });
    const b = fixture({ db: dir.db, clock, backend, options: { owner: 'b' } });
    a.define({ id: 'r', cron: '0 * * * *' });
    clock.advance(HOUR);
    // A fires; both then reach the submit phase in the same turn of the event loop.
    await a.pass();
    const run = a.only('r');
    a.store.ledger.clear('run', run.id);
    a.store.runs.cas(run.id, ['STARTING'], 'PENDING', {});
    backend.jobs.clear();
    backend.clearCalls();

    const [ra, rb] = await Promise.all([a.pass(), b.pass()]);
    expect(ra.submitted + rb.submitted).toBe(1);
    expect(backend.count('submit')).toBe(1);
    expect(a.store.ledger.all().map((e) => e.refId)).toEqual([run.id]);
    expect(a.run(run.id).status).toBe('STARTING');
  });
});

describe('replaying a completion is a no-op', () => {
  it('settling the same ledger entry twice gives one transition and one event', async () => {
    const f = fixture();
    f.define({ id: 'r', every: '10m' });
    f.advance(10 * MIN);
    await f.pass();
    const run = f.only('r');
    const entry = f.store.ledger.get('run', run.id)!;
    const outcome = { exitCode: 0, signal: null, reason: null, startedAt: f.now(), endedAt: f.now() + MIN };
    f.advance(MIN);
    settle(f.scheduler.ctx, entry, outcome, f.now());
    const trigger = f.trigger('r');
    f.advance(MIN);
    settle(f.scheduler.ctx, entry, { ...outcome, exitCode: 1 }, f.now());

    expect(f.run(run.id)).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    expect(f.events('run:completed')).toHaveLength(1);
    expect(f.events('run:failed')).toEqual([]);
    expect(f.trigger('r')).toEqual(trigger);
  });

  it('a failed one-shot settled twice queues one retry, counts one failure', async () => {
    const f = fixture();
    f.define({ id: 'once', in: '1m' });
    f.advance(MIN);
    await f.pass();
    const run = f.only('once');
    const entry = f.store.ledger.get('run', run.id)!;
    const outcome = { exitCode: 1, signal: null, reason: null, startedAt: f.now(), endedAt: f.now() };
    settle(f.scheduler.ctx, entry, outcome, f.now());
    settle(f.scheduler.ctx, entry, outcome, f.now());
    expect(f.runs('once').map((r) => [r.attempt, r.status])).toEqual([
      [1, 'ERROR'],
      [2, 'PENDING'],
    ]);
    expect(f.events('run:failed')).toHaveLength(1);
    expect(f.trigger('once').failCount).toBe(1);
  });

  it('two schedulers settling the same finished job at once: one completion', async () => {
    const clock = new ManualClock(T0);
    const backend = new TestBackend('local', { clock });
    const a = fixture({ db: dir.db, clock, backend, options: { owner: 'a' } });
    const b = fixture({ db: dir.db, clock, backend, options: { owner: 'b' } });
    a.define({ id: 'r', cron: '0 * * * *' });
    clock.advance(HOUR);
    await a.pass();
    const run = a.only('r');
    backend.finish(run.id);
    clock.advance(SEC);
    const [ra, rb] = await Promise.all([a.pass(), b.pass()]);
    expect(backend.count('fetch')).toBe(2); // both saw it done
    expect(ra.settled + rb.settled).toBeGreaterThanOrEqual(1);
    expect(a.events('run:completed')).toHaveLength(1);
    expect(a.run(run.id).status).toBe('COMPLETED');
  });
});
