// The order of the pass (seed 001): check before submit, backlog gate before health gate, an
// unhealthy backend pauses its stage and fails nothing, and a pass never throws.
import { afterEach, describe, expect, it } from 'vitest';
import { Fixture, MIN, SEC } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

describe('check before submit', () => {
  it('settles a finished job and submits the next one in the same pass (free slots counted after settling)', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'a', cron: '* * * * *' });
    f.define({ id: 'b', cron: '* * * * *' });

    f.advance(MIN);
    const first = await f.pass();
    expect(first.fired).toBe(2);
    expect(first.submitted).toBe(1);
    const [started] = f.backend.submitted();
    const waiting = [...f.runs('a'), ...f.runs('b')].find((r) => r.id !== started)!;
    expect(waiting.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(waiting.id)).toMatch(/no free slot/);

    f.backend.finish(started!, { exitCode: 0 });
    f.backend.clearCalls();
    f.advance(SEC);
    const second = await f.pass();

    expect(second.settled).toBe(1);
    expect(second.submitted).toBe(1);
    expect(f.run(started!).status).toBe('COMPLETED');
    expect(f.run(waiting.id).status).toBe('STARTING');
    // The order inside the pass: poll and fetch the finished one, then gate, then submit.
    expect(f.backend.ops()).toEqual(['poll', 'fetch', 'health', 'submit']);
    expect(f.store.ledger.all().map((e) => e.refId)).toEqual([waiting.id]);
  });

  it('never exceeds max_parallel while earlier jobs are still running', async () => {
    f = new Fixture({ options: { maxParallel: 2 } });
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *', overlap: 'allow' });
    f.advance(MIN);
    await f.pass();
    expect(f.backend.live()).toHaveLength(2);
    f.advance(SEC);
    await f.pass();
    expect(f.backend.live()).toHaveLength(2);
    expect(f.store.ledger.count()).toBe(2);
  });
});

describe('backlog gate before health gate', () => {
  it('never asks a backend with no waiting work for its health', async () => {
    f = new Fixture();
    f.define({ id: 'later', cron: '0 12 * * *' });
    for (let i = 0; i < 3; i++) {
      await f.pass();
      f.advance(10 * SEC);
    }
    expect(f.backend.count('health')).toBe(0);
    expect(f.backend.calls).toEqual([]);
  });

  it('does not ask for health while work is only in flight (polled, not gated)', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    f.backend.clearCalls();
    f.advance(SEC);
    await f.pass();
    expect(f.backend.ops()).toEqual(['poll']);
  });

  it('asks once per pass when there is work, however many items wait', async () => {
    f = new Fixture({ options: { maxParallel: 10 } });
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *' });
    f.backend.setHealth(false, 'down');
    f.advance(MIN);
    await f.pass();
    expect(f.backend.count('health')).toBe(1);
    f.advance(SEC);
    await f.pass();
    expect(f.backend.count('health')).toBe(2);
  });
});

describe('an unhealthy backend pauses its stage', () => {
  it('submits nothing and fails nothing, reports the pause once, and resumes when healthy', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.setHealth(false, 'cluster down');
    f.advance(MIN);
    await f.pass();
    f.advance(SEC);
    await f.pass();
    f.advance(SEC);
    await f.pass();

    expect(f.backend.count('submit')).toBe(0);
    const run = f.only('a');
    expect(run.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(run.id)).toMatch(/backend local paused: cluster down/);
    const paused = f.events('backend:paused');
    expect(paused).toHaveLength(1);
    expect(paused[0]!.message).toContain('cluster down');
    expect(f.events().filter((e) => e.level === 'error')).toEqual([]);

    f.backend.setHealth(true);
    f.advance(SEC);
    const report = await f.pass();
    expect(report.submitted).toBe(1);
    expect(f.run(run.id).status).toBe('STARTING');
    expect(f.events('backend:resumed')).toHaveLength(1);
  });

  it('treats a health check that throws as a pause, not a failure', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.fail('health', 'ssh: connection refused');
    f.advance(MIN);
    const report = await f.pass();
    expect(report.faults).toBe(0);
    expect(f.only('a').status).toBe('PENDING');
    expect(f.events('backend:paused')[0]!.message).toContain('ssh: connection refused');
  });
});

describe('a pass never throws', () => {
  it('a submit that throws ends that run ERROR with the reason; the next pass still works', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.fail('submit', 'spawn ENOENT');
    f.advance(MIN);
    await expect(f.pass()).resolves.toBeDefined();
    const failed = f.only('a');
    expect(failed.status).toBe('ERROR');
    expect(failed.reason).toBe('spawn ENOENT');
    expect(f.events('run:launch-failed')).toHaveLength(1);
    expect(f.trigger('a').lastError).toBe('spawn ENOENT');

    f.backend.succeed();
    f.advance(MIN);
    const report = await f.pass();
    expect(report.submitted).toBe(1);
    expect(f.latest('a').status).toBe('STARTING');
  });

  it('a poll that throws becomes an event; the job is settled by a later pass', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.finish(run.id, { exitCode: 0 });
    f.backend.fail('poll', 'squeue timed out');
    f.advance(SEC);
    await expect(f.pass()).resolves.toBeDefined();
    expect(f.run(run.id).status).toBe('STARTING');
    expect(f.events('backend:poll-failed')[0]!.message).toContain('squeue timed out');
    expect(f.store.ledger.count()).toBe(1);

    f.backend.succeed('poll');
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id).status).toBe('COMPLETED');
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a fetch that throws ends the run ERROR naming the problem', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.finish(run.id, { exitCode: 0 });
    f.backend.fail('fetch', 'manifest.json: unexpected end of JSON');
    f.advance(SEC);
    await expect(f.pass()).resolves.toBeDefined();
    const after = f.run(run.id);
    expect(after.status).toBe('ERROR');
    expect(after.reason).toMatch(/could not read the result: manifest\.json/);
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a store failure inside a step becomes a pass:fault event and the pass resolves', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    const real = f.store.routines.dueTriggers.bind(f.store.routines);
    f.store.routines.dueTriggers = () => {
      throw new Error('disk I/O error');
    };
    f.advance(MIN);
    const report = await f.pass();
    expect(report.faults).toBe(1);
    expect(f.events('pass:fault')[0]!.message).toBe('fire: disk I/O error');
    f.store.routines.dueTriggers = real;
    f.advance(SEC);
    const next = await f.pass();
    expect(next.faults).toBe(0);
    expect(next.submitted).toBe(1);
  });

  it('a job the backend lost ends ERROR with its reason', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.advance(60 * MIN);
    await f.pass();
    const run = f.only('a');
    f.backend.lose(run.id, 'job directory removed');
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'ERROR', reason: 'job directory removed' });
  });
});
