// One-off batch jobs through the pass: WAITING → PENDING when dependencies COMPLETED → submitted;
// a dependency that ends ERROR cancels its dependents with a reason naming it.
import { afterEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../main/engine/errors.js';
import { cancelJob } from '../../../main/engine/ops/control.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { COMPUTER, Fixture, SEC } from '../../helpers/engine-fixture.js';
import { waitFor } from '../../helpers/wait.js';

let f: Fixture;
afterEach(() => f?.close());

const post = (input: Record<string, unknown>) => postJob(f.store, { command: 'work', ...input }, f.now());

describe('batch jobs', () => {
  it('a job with no dependencies is submitted (FETCHED), seen RUNNING, then COMPLETED', async () => {
    f = new Fixture();
    const job = post({ args: ['--fast'] });
    expect(job.status).toBe('PENDING');
    await f.pass();
    expect(f.store.jobs.status(job.id)).toBe('FETCHED');
    const spec = f.backend.job(`job-${job.id}`).spec;
    expect(spec).toMatchObject({ runId: `job-${job.id}`, kind: 'job', jobId: job.id, routineId: null, command: 'work', args: ['--fast'] });
    expect(f.store.ledger.get('job', String(job.id))?.handle).toEqual({ id: `job-${job.id}` });

    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(job.id)).toBe('RUNNING');

    f.backend.finish(`job-${job.id}`, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a job cancelled by hand while its submit is in flight is stopped once the launch is recorded (the cancel found nothing to stop)', async () => {
    f = new Fixture();
    let release!: () => void;
    f.backend.submitGate = new Promise<void>((r) => (release = r));
    const job = post({});
    const passing = f.pass();
    await waitFor(() => f.backend.calls.some((c) => c.op === 'submit'), 5000, 'the submit to start');
    await cancelJob(f.control(), job.id);
    expect(f.store.jobs.status(job.id)).toBe('CANCEL');
    expect(f.backend.cancelled()).toEqual([]);
    release();
    await passing;
    await waitFor(() => f.backend.cancelled().length > 0, 5000, 'the launched job to be stopped');
    expect(f.backend.cancelled()).toEqual([`job-${job.id}`]);
    expect(f.scheduler.ctx.launches.stopping.size).toBe(0);
  });

  it('a dependent waits (WAITING), becomes PENDING when its dependency COMPLETED, and is submitted in that same pass', async () => {
    f = new Fixture();
    const a = post({ name: 'a' });
    const b = post({ name: 'b', after: [a.id] });
    expect(b.status).toBe('WAITING');
    await f.pass();
    expect(f.store.jobs.status(a.id)).toBe('FETCHED');
    expect(f.store.jobs.status(b.id)).toBe('WAITING');

    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(b.id)).toBe('WAITING');
    expect(f.backend.submitted()).toEqual([`job-${a.id}`]);

    f.backend.finish(`job-${a.id}`);
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(a.id)).toBe('COMPLETED');
    expect(f.store.jobs.status(b.id)).toBe('FETCHED');
    expect(f.backend.submitted()).toEqual([`job-${a.id}`, `job-${b.id}`]);
    expect(f.events('job:pending').map((e) => e.jobId)).toEqual([b.id]);
  });

  it('a dependency that ends ERROR cancels its dependents, naming it, downstream too', async () => {
    f = new Fixture();
    const a = post({ name: 'a' });
    const b = post({ name: 'b', after: [a.id] });
    const c = post({ name: 'c', after: [b.id] });
    await f.pass();
    f.backend.finish(`job-${a.id}`, { exitCode: 3 });
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.get(a.id)).toMatchObject({ status: 'ERROR', reason: 'exit 3' });
    expect(f.store.jobs.get(b.id)).toMatchObject({ status: 'CANCEL', reason: `dependency job ${a.id} ended ERROR` });
    expect(f.store.jobs.get(c.id)).toMatchObject({ status: 'CANCEL', reason: `dependency job ${b.id} ended CANCEL` });
    expect(f.backend.submitted()).toEqual([`job-${a.id}`]);
    expect(f.events('job:cancelled').map((e) => [e.jobId, e.level, e.message])).toEqual([
      [b.id, 'warn', `job ${b.id} cancelled: dependency job ${a.id} ended ERROR`],
      [c.id, 'warn', `job ${c.id} cancelled: dependency job ${b.id} ended CANCEL`],
    ]);
  });

  it('a job whose dependencies completed is announced ready', async () => {
    f = new Fixture();
    const a = post({ name: 'a' });
    const b = post({ name: 'b', after: [a.id] });
    await f.pass();
    f.backend.finish(`job-${a.id}`);
    f.advance(SEC);
    await f.pass();
    expect(f.events('job:pending').map((e) => [e.jobId, e.message])).toEqual([[b.id, `job ${b.id} ready: dependencies completed`]]);
  });

  it('waits for every dependency', async () => {
    f = new Fixture();
    const a = post({ name: 'a' });
    const b = post({ name: 'b' });
    const c = post({ name: 'c', after: [a.id, b.id] });
    await f.pass();
    f.backend.finish(`job-${a.id}`);
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(c.id)).toBe('WAITING');
    f.backend.finish(`job-${b.id}`);
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(c.id)).toBe('FETCHED');
  });

  it('an unknown dependency is refused at post, and nothing is stored', () => {
    f = new Fixture();
    let err: unknown;
    try {
      post({ after: [999] });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TendError);
    expect((err as TendError).code).toBe('INVALID');
    expect((err as TendError).issues).toEqual([{ path: 'after.0', message: 'unknown job 999' }]);
    expect(f.store.jobs.list()).toEqual([]);
  });

  it('a dependency already ERROR cancels the new job at once', async () => {
    f = new Fixture();
    const a = post({ name: 'a' });
    f.backend.fail('submit', 'spawn ENOENT');
    await f.pass();
    expect(f.store.jobs.get(a.id)).toMatchObject({ status: 'ERROR', reason: 'spawn ENOENT' });
    const b = post({ after: [a.id] });
    expect(b.status).toBe('CANCEL');
    expect(b.reason).toBe(`dependency job ${a.id} ended ERROR`);
  });

  it('a batch slot is taken by jobs only: a routine’s run in flight leaves it free', async () => {
    f = new Fixture({ options: { batchSlots: 1 } });
    f.define({ id: 'r', cron: '0 * * * *' });
    f.advance(60 * 60 * SEC);
    await f.pass();
    const job = post({});
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(job.id)).toBe('FETCHED');
  });

  it('with every slot taken a pending job waits, without a fault, and starts once one frees', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    const first = post({});
    await f.pass();
    const second = post({});
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(second.id)).toBe('PENDING');
    expect(f.events('pass:fault')).toEqual([]);
    f.backend.finish(`job-${first.id}`);
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(second.id)).toBe('FETCHED');
  });

  it('a job addressed to another computer is left for that worker', async () => {
    f = new Fixture();
    const mine = post({ computer: COMPUTER });
    const theirs = post({ computer: 'me@elsewhere' });
    await f.pass();
    expect(f.store.jobs.status(mine.id)).toBe('FETCHED');
    expect(f.store.jobs.status(theirs.id)).toBe('PENDING');
    expect(f.backend.submitted()).toEqual([`job-${mine.id}`]);
  });
});
