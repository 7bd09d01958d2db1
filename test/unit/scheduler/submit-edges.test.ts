// The submit phase's edges (scheduler/submit.ts): what was claimed and changed while the health gate
// was asked, a fired run that cannot be written, a launch answered with nothing, a pass or a
// micro-pass with nothing to do. Real store, test backend, hand-driven clock.
import { afterEach, describe, expect, it } from 'vitest';
import type { Handle } from '../../../main/engine/backend.js';
import { ManualClock } from '../../../main/engine/clock.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { removeRoutine } from '../../../main/engine/ops/routines.js';
import { cancelJob, runNow, stopRoutine } from '../../../main/engine/ops/control.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';
import { waitFor } from '../../helpers/wait.js';

let f: Fixture;
afterEach(() => f?.close());

/** Run `during` once, the first time the fixture's backend is asked for its health (the gate awaits it). */
function whileGateAsks(fx: Fixture, during: () => Promise<unknown> | unknown): void {
  const health = fx.backend.health.bind(fx.backend);
  let done = false;
  fx.backend.health = async () => {
    if (!done) {
      done = true;
      await during();
    }
    return health();
  };
}

/** A fixture whose store hears its statements: `begins()` counts the write transactions since `listen()`. */
function traced(clock?: ManualClock) {
  let heard: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => heard.push(sql) });
  const fx = new Fixture({ store, ...(clock ? { clock } : {}) });
  return { fx, listen: () => (heard = []), begins: () => heard.filter((s) => s.startsWith('BEGIN')).length };
}

describe('work that changed while the health gate was asked', () => {
  it('a job cancelled meanwhile is not launched, and its claim is let go', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    whileGateAsks(f, () => cancelJob(f.control(), job.id));
    const report = await f.pass();
    expect(report.submitted).toBe(0);
    expect(f.backend.submitted()).toEqual([]);
    expect(f.store.jobs.status(job.id)).toBe('CANCEL');
    expect(f.store.ledger.lease('job', String(job.id))).toBeNull();
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a run cancelled meanwhile is not launched, and its claim is let go', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 12 * * *' });
    const run = runNow(f.control(), full('a'));
    whileGateAsks(f, () => stopRoutine(f.control(), full('a')));
    const report = await f.pass();
    expect(report.submitted).toBe(0);
    expect(f.backend.submitted()).toEqual([]);
    expect(f.run(run.id).status).toBe('CANCELLED');
    expect(f.store.ledger.lease('run', run.id)).toBeNull();
  });

  it('a routine removed meanwhile: its run, still in the ledger, does not stop the pass from launching the rest', async () => {
    f = new Fixture();
    f.define({ id: 'rt', realtime: true });
    await f.pass();
    const rt = f.only('rt');
    expect(f.store.ledger.get('run', rt.id)).not.toBeNull();
    const job = postJob(f.store, { command: 'work' }, f.now());
    whileGateAsks(f, () => removeRoutine(f.store, full('rt'), f.now()));
    const report = await f.pass();
    expect(report).toMatchObject({ faults: 0, submitted: 1 });
    expect(f.store.jobs.status(job.id)).toBe('FETCHED');
  });

  it('a routine saved meanwhile on a backend the gate did not ask is fired and left to wait, not reported paused', async () => {
    f = new Fixture();
    postJob(f.store, { command: 'work' }, f.now());
    // A past one-shot is due at once: the transaction fires it, on a backend not asked this pass.
    whileGateAsks(f, () => f.define({ id: 'x', at: '2026-01-05T08:59:00Z', backend: 'slurm' }));
    const report = await f.pass();
    expect(report).toMatchObject({ faults: 0, fired: 1, submitted: 1 });
    const x = f.only('x');
    expect(x.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().has(x.id)).toBe(false);
    expect(f.events('backend:paused')).toEqual([]);
  });

  it('a run another scheduler claimed meanwhile is left to it: launched once, its claim untouched', async () => {
    f = new Fixture();
    // A second scheduler on the same store (closed with it).
    const second = new Fixture({ store: f.store, clock: f.clock, options: { owner: 'other-owner' } });
    f.define({ id: 'a', cron: '0 12 * * *' });
    const run = runNow(f.control(), full('a'));
    let release!: () => void;
    second.backend.submitGate = new Promise<void>((r) => (release = r));
    let theirs: Promise<unknown> | null = null;
    whileGateAsks(f, async () => {
      theirs = second.pass();
      await waitFor(() => second.backend.submitted().length > 0, 5000, 'the other scheduler to launch the run');
    });
    await f.pass();
    // The other scheduler's claim covers its launch until the handle is recorded.
    expect(f.store.ledger.lease('run', run.id)?.owner).toBe('other-owner');
    expect(f.backend.submitted()).toEqual([]);
    release();
    await theirs;
    expect(second.backend.submitted()).toEqual([run.id]);
    expect(f.store.ledger.get('run', run.id)).toMatchObject({ backend: 'local', handle: { id: run.id } });
  });
});

describe('firing faults', () => {
  it('a fired run that cannot be written is a trigger:fault of its routine; the others are written and launched', async () => {
    f = new Fixture();
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *' });
    const insert = f.store.runs.insert.bind(f.store.runs);
    f.store.runs.insert = (row) => {
      if (row.routineId === full('b')) throw new Error('disk full');
      insert(row);
    };
    f.advance(MIN);
    const report = await f.pass();
    expect(report).toMatchObject({ fired: 2, submitted: 2, faults: 0 });
    expect(f.events('trigger:fault').map((e) => [e.routineId, e.message])).toEqual([[full('b'), 'could not fire: disk full']]);
    expect(f.runs('b')).toEqual([]);
    for (const id of ['a', 'c']) expect(f.only(id).status).toBe('STARTING');
  });

  it('due triggers that cannot be read inside the transaction are a fault of the pass; the run already waiting is launched', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'a', cron: '* * * * *' });
    f.define({ id: 'b', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    const [started] = f.backend.submitted();
    const waiting = [...f.runs('a'), ...f.runs('b')].find((r) => r.id !== started)!;
    f.backend.finish(started!, { exitCode: 0 });
    // The look before the health gate reads them; a write while the gate is asked makes the
    // transaction read them again (scheduler/submit.ts), and that read fails.
    const due = f.store.routines.dueTriggers.bind(f.store.routines);
    let reads = 0;
    f.store.routines.dueTriggers = (now, limit) => {
      if (++reads === 2) throw new Error('disk I/O error');
      return due(now, limit);
    };
    const health = f.backend.health.bind(f.backend);
    f.backend.health = async () => {
      f.store.db.prepare(`UPDATE meta SET value = value WHERE key = 'defs_version'`).run();
      return health();
    };
    f.advance(MIN);
    const report = await f.pass();
    expect(report).toMatchObject({ faults: 1, fired: 0, submitted: 1 });
    expect(f.events('pass:fault').map((e) => e.message)).toEqual(['fire: disk I/O error']);
    expect(f.run(waiting.id).status).toBe('STARTING');
    expect(f.runs('a').length + f.runs('b').length).toBe(2);
  });

  it('due triggers that cannot be read before the health gate are not fired in that pass, though a second read would work; the next pass fires them', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'a', cron: '* * * * *' });
    f.define({ id: 'b', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    const [started] = f.backend.submitted();
    const waiting = [...f.runs('a'), ...f.runs('b')].find((r) => r.id !== started)!;
    f.backend.finish(started!, { exitCode: 0 });
    const due = f.store.routines.dueTriggers.bind(f.store.routines);
    let reads = 0;
    f.store.routines.dueTriggers = (now, limit) => {
      if (++reads === 1) throw new Error('disk I/O error');
      return due(now, limit);
    };
    f.advance(MIN);
    const report = await f.pass();
    expect(report).toMatchObject({ faults: 1, fired: 0, submitted: 1 });
    expect(f.run(waiting.id).status).toBe('STARTING');
    expect(f.runs('a').length + f.runs('b').length).toBe(2);
    const done = f.run(started!).routineId;
    await f.pass();
    expect(f.store.runs.history(done, 10)).toHaveLength(2);
  });
});

describe('a launch answered with neither a handle nor an error', () => {
  const silent = (fx: Fixture) => {
    fx.backend.submit = async () => undefined as unknown as Handle;
  };

  it('fails the run: launch failed', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *', retry: 'none' });
    silent(f);
    f.advance(MIN);
    expect((await f.pass()).submitted).toBe(0);
    expect(f.only('a')).toMatchObject({ status: 'ERROR', reason: 'launch failed' });
    expect(f.events('run:launch-failed').map((e) => e.message)).toEqual(['could not start: launch failed']);
    expect(f.events('run:refused')).toEqual([]);
    expect(f.store.ledger.count()).toBe(0);
  });

  it('fails the job: launch failed', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    silent(f);
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'ERROR', reason: 'launch failed' });
    expect(f.events('job:launch-failed').map((e) => e.message)).toEqual([`job ${job.id} could not start: launch failed`]);
  });
});

describe('a launch that failed after its routine changed', () => {
  it('a realtime instance that could not be launched is no failure of the batch routine saved under its name meanwhile', async () => {
    f = new Fixture({ options: { launchInBackground: true } });
    f.define({ id: 'rt', realtime: true });
    let fail!: (err: Error) => void;
    f.backend.submit = () => new Promise<Handle>((_, reject) => (fail = reject));
    await f.pass();
    const rt = f.only('rt');
    f.define({ id: 'rt', cron: '0 12 * * *' });
    await f.pass(); // the definitions are read again while the launch is in flight
    fail(new Error('no slots'));
    await Promise.all([...f.scheduler.ctx.launches.launching.values()].map((l) => l.done));
    expect(f.run(rt.id)).toMatchObject({ kind: 'realtime', status: 'ERROR', reason: 'no slots' });
    expect(f.trigger('rt')).toMatchObject({ failCount: 0, attempts: 0, lastError: null });
  });
});

describe('schedule limits', () => {
  it("a routine whose schedule is missing from the definitions read (renamed between the refresh's two reads) is launched, with no schedule limit", async () => {
    f = new Fixture();
    f.store.routines.schedules = () => [];
    f.define({ id: 'a', cron: '* * * * *' });
    f.advance(MIN);
    expect(await f.pass()).toMatchObject({ faults: 0, submitted: 1 });
    expect(f.only('a').status).toBe('STARTING');
  });
});

describe('the health gate', () => {
  it('a backend unhealthy with no reason given is paused as unhealthy', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.setHealth(false, null);
    f.advance(MIN);
    await f.pass();
    expect(f.events('backend:paused').map((e) => e.message)).toEqual(['backend local paused: unhealthy; nothing fails, waiting work stays queued']);
    expect(f.scheduler.waitReasons().get(f.only('a').id)).toBe('backend local paused: unhealthy');
  });
});

describe('nothing to do', () => {
  it('a pass with nothing due and nothing waiting asks no backend and writes nothing', async () => {
    const t = traced();
    f = t.fx;
    f.define({ id: 'a', cron: '0 12 * * *' });
    t.listen();
    const report = await f.pass();
    expect(report).toMatchObject({ fired: 0, submitted: 0, faults: 0 });
    expect(f.backend.ops()).toEqual([]);
    expect(t.begins()).toBe(0);
  });

  it('the micro-pass after an exit fires nothing: a due trigger waits for the pass, and with no restart due it asks no backend and writes only the settling', async () => {
    // b is due at T0; the realtime routine's instances die quickly before and after.
    const t = traced(new ManualClock(T0 - 5 * SEC));
    f = t.fx;
    f.define({ id: 'rt', realtime: true });
    f.define({ id: 'b', cron: '0 9 * * *' });
    await f.pass();
    f.backend.finish(f.only('rt').id, { exitCode: 1 });
    await f.pass(); // the first quick death: restarted at once
    expect(f.runs('rt').map((r) => r.status)).toEqual(['EXITED', 'STARTING']);
    f.advance(5 * SEC);
    f.backend.finish(f.latest('rt').id, { exitCode: 1 });
    f.backend.clearCalls();
    t.listen();
    expect(await f.scheduler.settleExited(f.latest('rt').id)).toBe(true);
    // The second: restart backoff, so the micro-pass has nothing to start.
    expect(f.runs('rt').map((r) => r.status)).toEqual(['EXITED', 'EXITED']);
    expect(f.runs('b')).toEqual([]);
    expect(f.backend.ops()).not.toContain('health');
    expect(f.backend.submitted()).toEqual([]);
    expect(t.begins()).toBe(1);
    expect((await f.pass()).fired).toBe(1);
  });

  it('the micro-pass that restarts an instance leaves a due trigger to the pass', async () => {
    f = new Fixture({ clock: new ManualClock(T0 - 5 * SEC) });
    f.define({ id: 'rt', realtime: true });
    f.define({ id: 'b', cron: '0 9 * * *' });
    await f.pass();
    f.advance(5 * SEC);
    f.backend.finish(f.only('rt').id, { exitCode: 1 });
    const before = f.events().length;
    expect(await f.scheduler.settleExited(f.only('rt').id)).toBe(true);
    expect(f.runs('rt').map((r) => r.status)).toEqual(['EXITED', 'STARTING']);
    expect(f.runs('b')).toEqual([]);
    expect(f.events().slice(before).map((e) => e.type)).toEqual(['run:exited', 'run:submitted']);
    expect((await f.pass()).fired).toBe(1);
  });
});
