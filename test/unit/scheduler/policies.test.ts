// Per-routine policies driven through the real pass: observe-only schedules, dependencies, misfire,
// overlap, one-shot retry, `every` from completion, timeout.
import { afterEach, describe, expect, it } from 'vitest';
import { newRun } from '../../../main/engine/domain/run.js';
import { runNow } from '../../../main/engine/ops/control.js';
import { reportExternal } from '../../../main/engine/ops/external.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { setScheduleMode } from '../../../main/engine/ops/schedules.js';
import { Scheduler } from '../../../main/engine/scheduler/scheduler.js';
import { TestBackend } from '../../helpers/test-backend.js';
import { COMPUTER, Fixture, HOUR, MIN, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

const iso = (ms: number) => new Date(ms).toISOString();

describe('observe-only schedule', () => {
  it('creates PENDING runs, submits nothing, and marks them DELAYED after tolerance', async () => {
    f = new Fixture();
    f.define({ id: 'watched', schedule: 'obs', cron: '* * * * *', tolerance: '2m' });
    setScheduleMode(f.store, 'obs', 'observe', f.now());

    f.advance(MIN);
    const report = await f.pass();
    expect(report.fired).toBe(1);
    const run = f.only('watched');
    expect(run.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(run.id)).toBe('schedule obs is observe-only');

    f.advance(2 * MIN + SEC);
    await f.pass();
    const delayed = f.run(run.id);
    expect(delayed.status).toBe('DELAYED');
    expect(delayed.reason).toBe('schedule obs is observe-only');
    expect(f.events('run:delayed').map((e) => e.runId)).toContain(run.id);
    expect(f.backend.count('submit')).toBe(0);
    expect(f.backend.count('health')).toBe(0);
  });

  it('switching the schedule back to active submits the waiting run', async () => {
    f = new Fixture();
    f.define({ id: 'watched', schedule: 'obs', cron: '0 * * * *' });
    setScheduleMode(f.store, 'obs', 'observe', f.now());
    f.advance(HOUR);
    await f.pass();
    setScheduleMode(f.store, 'obs', 'active', f.now());
    f.advance(SEC);
    await f.pass();
    expect(f.only('watched').status).toBe('STARTING');
    expect(f.backend.count('submit')).toBe(1);
  });
});

describe('dependencies hold back dependents', () => {
  it('a dependent waits until its dependency COMPLETED in the same cycle, then starts in the same pass', async () => {
    f = new Fixture();
    f.define({ id: 'fetch', cron: '5 9 * * *' });
    f.define({ id: 'parse', cron: '5 9 * * *', after: [full('fetch')] });
    f.advance(5 * MIN);
    await f.pass();
    const fetch = f.only('fetch');
    const parse = f.only('parse');
    expect(fetch.status).toBe('STARTING');
    expect(parse.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(parse.id)).toMatch(`waiting for ${full('fetch')} (`);

    f.advance(MIN);
    await f.pass();
    expect(f.run(parse.id).status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(parse.id)).toBe(`waiting for ${full('fetch')} (RUNNING on 2026-01-05)`);

    f.backend.finish(fetch.id, { exitCode: 0 });
    f.advance(MIN);
    await f.pass();
    expect(f.run(fetch.id).status).toBe('COMPLETED');
    expect(f.run(parse.id).status).toBe('STARTING');
  });

  it('a failed dependency keeps the dependent waiting until it is DELAYED, never started', async () => {
    f = new Fixture();
    f.define({ id: 'fetch', cron: '5 9 * * *' });
    f.define({ id: 'parse', cron: '5 9 * * *', after: [full('fetch')], tolerance: '3m' });
    f.advance(5 * MIN);
    await f.pass();
    const fetch = f.only('fetch');
    f.backend.finish(fetch.id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(fetch.id).status).toBe('ERROR');
    const parse = f.only('parse');
    expect(parse.status).toBe('PENDING');

    f.advance(3 * MIN);
    await f.pass();
    const delayed = f.run(parse.id);
    expect(delayed.status).toBe('DELAYED');
    expect(delayed.reason).toBe(`waiting for ${full('fetch')} (ERROR on 2026-01-05)`);
    f.advance(10 * MIN);
    await f.pass();
    expect(f.run(parse.id).status).toBe('DELAYED');
    expect(f.backend.submitted()).toEqual([fetch.id]);
  });

  it("yesterday's completed dependency does not release today's dependent", async () => {
    f = new Fixture();
    f.define({ id: 'fetch', cron: '30 9 * * *' });
    f.define({ id: 'parse', cron: '0 10 * * *', after: [full('fetch')] });
    f.advance(30 * MIN); // day 1, 09:30
    await f.pass();
    f.backend.finish(f.only('fetch').id);
    f.advance(30 * MIN); // 10:00: fetch completed today, parse runs
    await f.pass();
    expect(f.only('parse').status).toBe('STARTING');
    f.backend.finish(f.only('parse').id);
    f.advance(SEC);
    await f.pass();

    // Day 2 with fetch moved later than parse: at 10:00 only yesterday's fetch has completed.
    f.define({ id: 'fetch', cron: '30 11 * * *' });
    f.clock.set(T0 + 24 * HOUR + HOUR);
    await f.pass();
    const today = f.latest('parse');
    expect(today.cycle).toBe('2026-01-06');
    expect(today.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(today.id)).toBe(`waiting for ${full('fetch')} (not run on 2026-01-06)`);
  });
});

describe('misfire after the clock jumps over several cron times', () => {
  // Defined at 09:00, every 10 minutes; the machine sleeps until 10:05: 09:10 … 10:00 were missed (6).
  const jump = T0 + HOUR + 5 * MIN;

  it('skip: runs none of them and re-arms for the next time', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'skip' });
    f.clock.set(jump);
    const report = await f.pass();
    expect(report.fired).toBe(0);
    expect(f.runs('r')).toEqual([]);
    expect(f.trigger('r').nextRunAt).toBe(T0 + HOUR + 10 * MIN);
    expect(f.events('trigger:misfire')[0]!.data).toMatchObject({ missed: 6, running: 0, policy: 'skip' });
  });

  it('once: runs one, for the latest missed time', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'once' });
    f.clock.set(jump);
    await f.pass();
    expect(f.runs('r').map((r) => iso(r.scheduledAt))).toEqual(['2026-01-05T10:00:00.000Z']);
    expect(f.trigger('r').nextRunAt).toBe(T0 + HOUR + 10 * MIN);
  });

  it('once: still the latest missed time when far more were missed than the replay cap', async () => {
    f = new Fixture({ options: { misfireAllCap: 3 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'once' });
    f.clock.set(jump);
    await f.pass();
    expect(f.runs('r').map((r) => iso(r.scheduledAt))).toEqual(['2026-01-05T10:00:00.000Z']);
  });

  it('all: runs every missed time when under the cap', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    f.clock.set(jump);
    const report = await f.pass();
    expect(report.fired).toBe(6);
    expect(f.runs('r').map((r) => iso(r.scheduledAt).slice(11, 16))).toEqual(['09:10', '09:20', '09:30', '09:40', '09:50', '10:00']);
    // Replays run one after another (overlap skip), not all at once.
    expect(f.backend.count('submit')).toBe(1);
  });

  it('all: capped, the most recent ones', async () => {
    f = new Fixture({ options: { misfireAllCap: 3 } });
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'all' });
    f.clock.set(jump);
    await f.pass();
    expect(f.runs('r').map((r) => iso(r.scheduledAt).slice(11, 16))).toEqual(['09:40', '09:50', '10:00']);
    const misfire = f.events('trigger:misfire')[0]!;
    expect(misfire.data).toMatchObject({ running: 3, policy: 'all' });
    expect(misfire.data!.missed as number).toBeGreaterThan(3);
  });

  it('a long downtime with a dense cron stays cheap and still picks the latest time', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '* * * * *', misfire: 'once' });
    f.clock.set(T0 + 90 * 24 * HOUR + 30 * SEC); // three months asleep
    await f.pass();
    expect(f.runs('r').map((r) => r.scheduledAt)).toEqual([T0 + 90 * 24 * HOUR]);
    // Cheap because it counts only a recent window, not all 129,600 minutes: the count says "at least".
    const misfire = f.events('trigger:misfire')[0]!;
    expect(misfire.message).toMatch(/^missed \d+\+ run time\(s\)/);
    expect(misfire.data!.missed as number).toBeLessThan(90 * 24 * 60);
  });

  it('a due time less than misfire_after late is not a misfire', async () => {
    f = new Fixture();
    f.define({ id: 'r', cron: '*/10 * * * *', misfire: 'skip' });
    f.advance(10 * MIN + 30 * SEC);
    await f.pass();
    expect(f.only('r').scheduledAt).toBe(T0 + 10 * MIN);
    expect(f.events('trigger:misfire')).toEqual([]);
  });
});

describe('overlap policies', () => {
  async function threeTicks(overlap: string): Promise<void> {
    f = new Fixture();
    f.define({ id: 'r', cron: '* * * * *', overlap });
    for (let i = 0; i < 3; i++) {
      f.advance(MIN);
      await f.pass();
    }
  }

  it('skip: a run time while the previous run is running is skipped, with an event', async () => {
    await threeTicks('skip');
    expect(f.runs('r').map((r) => r.status)).toEqual(['RUNNING']);
    expect(f.events('run:skipped')).toHaveLength(2);
    expect(f.events('run:skipped')[0]!.message).toMatch(/previous run is still RUNNING \(overlap: skip\)/);
  });

  it('queue-one: one run waits behind the running one, further ones are skipped; it starts when the first ends', async () => {
    await threeTicks('queue-one');
    const [first, queued, ...rest] = f.runs('r');
    expect(rest).toEqual([]);
    expect(first!.status).toBe('RUNNING');
    expect(queued!.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(queued!.id)).toBe('previous run still running');
    expect(f.events('run:skipped')).toHaveLength(1);

    f.backend.finish(first!.id);
    f.advance(SEC);
    await f.pass();
    expect(f.run(first!.id).status).toBe('COMPLETED');
    expect(f.run(queued!.id).status).toBe('STARTING');
  });

  it('allow: every run time starts, side by side', async () => {
    await threeTicks('allow');
    expect(f.runs('r').map((r) => r.status)).toEqual(['RUNNING', 'RUNNING', 'STARTING']);
    expect(f.backend.live()).toHaveLength(3);
    expect(f.events('run:skipped')).toEqual([]);
  });
});

describe('one-shot retry (at / in)', () => {
  it('retries every 60 s until 1 h after the first due time, then the trigger is failed', async () => {
    f = new Fixture();
    f.define({ id: 'once', in: '1m' });
    const due = T0 + MIN;
    expect(f.trigger('once').nextRunAt).toBe(due);
    f.clock.set(due);
    const starts: number[] = [];
    for (let i = 0; i < 100 && f.trigger('once').state === 'scheduled'; i++) {
      await f.pass();
      const run = f.latest('once');
      expect(run.status).toBe('STARTING');
      starts.push(f.now());
      f.backend.finish(run.id, { exitCode: 1 });
      await f.pass(); // settles it, queues the next attempt
      if (f.trigger('once').state !== 'scheduled') break;
      const retry = f.latest('once');
      expect(retry).toMatchObject({ status: 'PENDING', attempt: run.attempt + 1, notBefore: f.now() + MIN, scheduledAt: due });
      f.advance(MIN - SEC);
      await f.pass();
      expect(f.run(retry.id).status).toBe('PENDING'); // not before its time
      f.advance(SEC);
    }
    expect(starts[0]).toBe(due);
    expect(starts.at(-1)).toBe(due + HOUR);
    expect(starts).toHaveLength(61);
    const t = f.trigger('once');
    expect(t).toMatchObject({ state: 'failed', lastError: 'exit 1', failCount: 61 });
    expect(f.runs('once').every((r) => r.status === 'ERROR')).toBe(true);

    f.advance(HOUR);
    await f.pass();
    expect(f.runs('once')).toHaveLength(61);
  });

  it('a retry that succeeds marks the trigger fired', async () => {
    f = new Fixture();
    f.define({ id: 'once', at: '2026-01-05T09:30:00Z' });
    f.clock.set(T0 + 30 * MIN);
    await f.pass();
    f.backend.finish(f.latest('once').id, { exitCode: 1 });
    await f.pass();
    f.advance(MIN);
    await f.pass();
    const second = f.latest('once');
    expect(second.attempt).toBe(2);
    f.backend.finish(second.id, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.trigger('once').state).toBe('fired');
    f.advance(2 * HOUR);
    await f.pass();
    expect(f.runs('once')).toHaveLength(2);
  });

  it('recurring routines do not retry by default', async () => {
    f = new Fixture();
    f.define({ id: 'rec', cron: '0 * * * *' });
    f.advance(HOUR);
    await f.pass();
    f.backend.finish(f.only('rec').id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    f.advance(5 * MIN);
    await f.pass();
    expect(f.runs('rec').map((r) => r.status)).toEqual(['ERROR']);
    expect(f.trigger('rec')).toMatchObject({ state: 'scheduled', nextRunAt: T0 + 2 * HOUR, failCount: 1 });
  });
});

describe('every', () => {
  it('computes the next run from the completion, so the loop never overlaps itself', async () => {
    f = new Fixture();
    f.define({ id: 'poller', every: '10m' });
    expect(f.trigger('poller').nextRunAt).toBe(T0 + 10 * MIN);
    f.advance(10 * MIN);
    await f.pass();
    const first = f.only('poller');
    expect(f.trigger('poller').nextRunAt).toBeNull();

    f.advance(10 * MIN); // 09:20: a fixed rate would fire again here
    await f.pass();
    expect(f.runs('poller')).toHaveLength(1);

    f.backend.finish(first.id);
    f.advance(3 * MIN); // completes 09:23
    await f.pass();
    expect(f.run(first.id).status).toBe('COMPLETED');
    expect(f.trigger('poller').nextRunAt).toBe(T0 + 33 * MIN);

    f.clock.set(T0 + 33 * MIN - SEC);
    await f.pass();
    expect(f.runs('poller')).toHaveLength(1);
    f.advance(SEC);
    await f.pass();
    expect(f.runs('poller')).toHaveLength(2);
  });

  it('a failed attempt also re-arms from its end', async () => {
    f = new Fixture();
    f.define({ id: 'poller', every: '10m' });
    f.advance(10 * MIN);
    await f.pass();
    f.backend.finish(f.only('poller').id, { exitCode: 4 });
    f.advance(MIN);
    await f.pass();
    expect(f.trigger('poller')).toMatchObject({ nextRunAt: T0 + 21 * MIN, lastError: 'exit 4' });
  });
});

describe('timeout', () => {
  it('stops a run that outlives its timeout (cancel called) and ends it ERROR "timed out…"', async () => {
    f = new Fixture();
    f.define({ id: 'slow', cron: '0 * * * *', timeout: '5m' });
    f.advance(HOUR);
    await f.pass();
    const run = f.only('slow');
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id).status).toBe('RUNNING');

    f.advance(5 * MIN - 2 * SEC); // 4m59s after start: not yet
    await f.pass();
    expect(f.backend.cancelled()).toEqual([]);

    f.advance(2 * SEC);
    await f.pass();
    expect(f.backend.calls.filter((c) => c.op === 'cancel')).toEqual([{ op: 'cancel', id: run.id, graceMs: f.opts.killGraceMs }]);
    expect(f.events('run:timeout')).toHaveLength(1);

    f.advance(SEC);
    await f.pass();
    const ended = f.run(run.id);
    expect(ended.status).toBe('ERROR');
    expect(ended.reason).toMatch(/^timed out after 300s/);
    expect(ended.signal).toBe('SIGTERM');
    expect(f.backend.cancelled()).toEqual([run.id]);
  });

  it('asks once: a job that ignores TERM is not cancelled again every pass', async () => {
    f = new Fixture();
    f.define({ id: 'slow', cron: '0 * * * *', timeout: '1m' });
    f.backend.cancelBehaviour = 'ignore';
    f.advance(HOUR);
    await f.pass();
    for (let i = 0; i < 5; i++) {
      f.advance(MIN);
      await f.pass();
    }
    expect(f.backend.cancelled()).toHaveLength(1);
  });
});

describe('what the submit phase starts', () => {
  it('a schedule’s max_parallel holds its runs back, counting those already running, and says why', async () => {
    f = new Fixture();
    f.store.routines.ensureSchedule('s', f.now());
    f.store.routines.setScheduleMaxParallel('s', 1);
    f.define({ id: 'a', schedule: 's', cron: '0 * * * *' });
    f.define({ id: 'b', schedule: 's', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const [started, held] = [f.only('a'), f.only('b')].sort((x, y) => (x.status === 'STARTING' ? -1 : y.status === 'STARTING' ? 1 : 0));
    expect([started!.status, held!.status]).toEqual(['STARTING', 'PENDING']);
    expect(f.scheduler.waitReasons().get(held!.id)).toBe('no free slot in schedule s (max_parallel 1)');
    f.advance(SEC);
    await f.pass(); // the first is RUNNING now, and still counts
    f.define({ id: 'c', schedule: 's', cron: '30 * * * *' });
    f.clock.set(T0 + HOUR + 30 * MIN);
    await f.pass();
    expect(f.only('c').status).toBe('PENDING');
    expect(f.backend.submitted()).toEqual([started!.id]);
    f.backend.finish(started!.id);
    f.advance(SEC);
    await f.pass();
    expect(f.backend.submitted()).toHaveLength(2);
  });

  it('a realtime routine after another realtime one waits until it is RUNNING', async () => {
    f = new Fixture({ backend: new TestBackend('local', { clock: undefined, startAs: 'queued' }) });
    f.define({ id: 'source', realtime: true });
    f.define({ id: 'sink', realtime: true, after: [full('source')] });
    await f.pass();
    expect(f.runs('sink')).toEqual([]);
    expect(f.scheduler.waitReasons().get(full('sink'))).toBe(`waiting for ${full('source')} to be RUNNING`);
    f.backend.markRunning(f.only('source').id);
    f.advance(SEC);
    await f.pass();
    expect(f.only('sink').status).toBe('STARTING');
  });

  it('a launch the backend refuses ends the run ERROR with the refusal as the reason and a run:refused event', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.backend.fail('submit', 'LAUNCH_REFUSED: cwd /gone does not exist');
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('a');
    expect(run).toMatchObject({ status: 'ERROR', reason: 'LAUNCH_REFUSED: cwd /gone does not exist' });
    expect(f.events('run:refused').map((e) => [e.runId, e.message])).toEqual([[run.id, 'LAUNCH_REFUSED: cwd /gone does not exist']]);
    expect(f.events('run:launch-failed')).toEqual([]);
  });

  it('a job that cannot be launched ends ERROR with the reason, and says so', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.backend.fail('submit', 'no shell');
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'ERROR', reason: 'no shell', endedAt: f.now() });
    expect(f.events('job:launch-failed').map((e) => [e.jobId, e.message])).toEqual([[job.id, `job ${job.id} could not start: no shell`]]);
    expect(f.store.ledger.count()).toBe(0);
  });

  it('submissions say where they went', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.events('run:submitted').map((e) => [e.runId, e.message])).toEqual([[f.only('a').id, 'submitted to local (attempt 1)']]);
    expect(f.events('job:submitted').map((e) => [e.jobId, e.message])).toEqual([[job.id, `job ${job.id} submitted to local`]]);
  });

  it('a run stopped by hand while it was being submitted is recorded and asked to stop', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    const submit = f.backend.submit.bind(f.backend);
    f.backend.submit = async (spec) => {
      f.store.runs.cas(spec.runId, ['STARTING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
      return submit(spec);
    };
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('a');
    expect(f.store.ledger.get('run', run.id)).not.toBeNull();
    await new Promise((r) => setImmediate(r));
    expect(f.backend.cancelled()).toEqual([run.id]);
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand' });
    expect(f.store.ledger.count()).toBe(0);
  });

  it('a retry waiting for its time says until when', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *', retry: { every: '5m', for: '1h' } });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.backend.finish(f.only('a').id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    const retry = f.latest('a');
    expect(f.scheduler.waitReasons().get(retry.id)).toBe(`retry at ${iso(T0 + HOUR + SEC + 5 * MIN)}`);
  });
});

describe('what the submit phase leaves alone or sends elsewhere', () => {
  it('a realtime routine in an observe-only schedule is not started', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true, schedule: 'obs' });
    setScheduleMode(f.store, 'obs', 'observe', f.now());
    await f.pass();
    expect(f.runs('feed')).toEqual([]);
    expect(f.backend.count('submit')).toBe(0);
  });

  it('a dependency that has not run this cycle is named as not run', async () => {
    f = new Fixture();
    f.define({ id: 'fetch', cron: '0 0 1 1 *' });
    f.define({ id: 'parse', cron: '5 9 * * *', after: [full('fetch')] });
    f.advance(5 * MIN);
    await f.pass();
    expect(f.scheduler.waitReasons().get(f.only('parse').id)).toBe(`waiting for ${full('fetch')} (not run on 2026-01-05)`);
  });

  it('a realtime routine after a batch one is started anyway: dependencies across kinds are not enforced', async () => {
    f = new Fixture();
    f.define({ id: 'etl', cron: '0 0 1 1 *' });
    f.define({ id: 'feed', realtime: true, after: [full('etl')] });
    await f.pass();
    expect(f.only('feed').status).toBe('STARTING');
  });

  it('a job once fetched by a worker host (its claim gone stale) runs here on the local backend', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.store.db.prepare(`UPDATE jobs SET backend = 'pool:user@WORKER' WHERE id = ?`).run(job.id);
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'FETCHED', backend: 'local' });
    expect(f.backend.submitted()).toEqual([`job-${job.id}`]);
  });
});

describe('a launch in the background', () => {
  it('that cannot be recorded is a submit:fault naming the run or the job, and the engine is still told', async () => {
    let told = 0;
    f = new Fixture({ options: { launchInBackground: true } });
    const scheduler = new Scheduler(f.store, f.clock, new Map([['local', f.backend]]), f.opts, { onLaunched: () => told++ });
    f.define({ id: 'a', cron: '0 * * * *' });
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.store.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON ledger BEGIN SELECT RAISE(ABORT, 'ledger refused'); END`);
    f.clock.set(T0 + HOUR);
    await scheduler.pass();
    await Promise.all([...scheduler.ctx.launches.launching.values()].map((l) => l.done));
    const run = f.only('a');
    expect(f.events('submit:fault').map((e) => [e.runId, e.jobId, e.message]).sort()).toEqual(
      [
        [run.id, null, 'could not record the launch: ledger refused'],
        [null, job.id, 'could not record the launch: ledger refused'],
      ].sort(),
    );
    // Answered in the same turn: recorded (here, tried) together, and the engine told once.
    expect(told).toBe(1);
  });
});

describe('why the submit phase holds work back, and what it records', () => {
  it('a paused backend holds realtime starts and jobs too, each with the reason', async () => {
    f = new Fixture();
    f.backend.setHealth(false, 'disk full');
    f.define({ id: 'feed', realtime: true });
    const job = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    expect(f.scheduler.waitReasons().get(full('feed'))).toBe('backend local paused: disk full');
    expect(f.scheduler.waitReasons().get(`job:${job.id}`)).toBe('backend local paused: disk full');
  });

  it('work on a backend that is not configured waits as paused, and nothing is launched or failed', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *', backend: 'slurm' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('a');
    expect(run.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(run.id)).toBe('backend slurm paused: unhealthy');
  });

  it('a health check that does not answer within the deadline pauses the backend, naming the call', async () => {
    f = new Fixture({ options: { backendTimeoutMs: 20 } });
    f.define({ id: 'a', cron: '0 * * * *' });
    f.backend.health = () => new Promise(() => undefined);
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.scheduler.waitReasons().get(f.only('a').id)).toBe('backend local paused: local health did not answer within 20 ms');
  });

  it('a backend healthy all along is never announced as resumed, and a normal submission is never cancelled', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *', overlap: 'allow' });
    for (let i = 0; i < 3; i++) {
      f.advance(MIN);
      await f.pass();
    }
    await new Promise((r) => setImmediate(r));
    expect(f.events('backend:resumed')).toEqual([]);
    expect(f.backend.cancelled()).toEqual([]);
  });

  it('a backend that recovers is announced once by name', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.setHealth(false, 'disk full');
    f.advance(MIN);
    await f.pass();
    f.backend.setHealth(true);
    f.advance(SEC);
    await f.pass();
    expect(f.events('backend:resumed').map((e) => e.message)).toEqual(['backend local healthy again']);
  });

  it('a run still STARTING (launched, not yet seen running) holds back the next one under overlap skip', async () => {
    f = new Fixture({ backend: new TestBackend('local', { startAs: 'queued' }) });
    f.define({ id: 'a', cron: '* * * * *', overlap: 'queue-one' });
    f.advance(MIN);
    await f.pass();
    f.advance(MIN);
    await f.pass();
    const [first, second] = f.runs('a');
    expect([first!.status, second!.status]).toEqual(['STARTING', 'PENDING']);
    expect(f.scheduler.waitReasons().get(second!.id)).toBe('previous run still running');
  });

  it('a run already launched or running is not waiting: it has no wait reason', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('a');
    f.advance(SEC);
    await f.pass();
    expect(f.run(run.id).status).toBe('RUNNING');
    expect([...f.scheduler.waitReasons().keys()]).toEqual([]);
  });

  it('a run started by hand does not wait for dependencies', async () => {
    f = new Fixture();
    f.define({ id: 'fetch', cron: '0 0 1 1 *' });
    f.define({ id: 'parse', cron: '0 0 1 1 *', after: [full('fetch')] });
    const manual = runNow(f.control(), full('parse'));
    await f.pass();
    expect(f.run(manual.id).status).toBe('STARTING');
  });

  it('a launch that fails says so and queues the routine’s retry', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *', retry: { every: '5m', for: '1h' } });
    f.backend.fail('submit', 'fork failed');
    f.clock.set(T0 + HOUR);
    await f.pass();
    const first = f.runs('a')[0]!;
    expect(f.events('run:launch-failed').map((e) => [e.runId, e.message])).toEqual([[first.id, 'could not start: fork failed']]);
    expect(f.events('run:retry')).toHaveLength(1);
    expect(f.runs('a')).toHaveLength(2);
  });

  it('a run left STARTING with no ledger entry and no claim (a launch never recorded) is sent again under its id, recording where', async () => {
    f = new Fixture();
    const def = f.define({ id: 'a', cron: '0 0 1 1 *' });
    const run = { ...newRun(def, T0, T0), status: 'STARTING' as const };
    f.store.runs.insert(run);
    await f.pass();
    expect(f.backend.submitted()).toEqual([run.id]);
    expect(f.run(run.id)).toMatchObject({ status: 'STARTING', backend: 'local', runDir: expect.stringContaining(run.id) });
    expect(f.store.ledger.get('run', run.id)).not.toBeNull();
  });

  it('a claimed job records its directory, backend and computer; one released from a stale claim keeps its directory', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.store.db.prepare(`UPDATE jobs SET run_dir = '/kept/dir' WHERE id = ?`).run(job.id);
    await f.pass();
    expect(f.store.jobs.get(job.id)).toMatchObject({ status: 'FETCHED', runDir: '/kept/dir', backend: 'local' });
    expect(f.store.db.prepare('SELECT fetched_by FROM jobs WHERE id = ?').pluck().get(job.id)).toBe(COMPUTER);
    expect(f.backend.job(`job-${job.id}`).spec.runDir).toBe('/kept/dir');
  });
});

describe('slots held by launches in flight and by batch jobs', () => {
  /** A fixture launching in the background whose launches never answer: each holds its slot. */
  function hanging(options: Record<string, unknown> = {}): Fixture {
    const fx = new Fixture({ options: { launchInBackground: true, ...options } });
    fx.backend.submitMode = 'hang';
    return fx;
  }

  it('a launch in flight holds its slot under max_parallel', async () => {
    f = hanging({ maxParallel: 1 });
    f.define({ id: 'a', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.define({ id: 'b', cron: '0 0 1 1 *' });
    const manual = runNow(f.control(), full('b'));
    f.advance(SEC);
    await f.pass();
    expect(f.scheduler.waitReasons().get(manual.id)).toBe('no free slot (max_parallel 1)');
  });

  it('a launch in flight holds its slot in its schedule', async () => {
    f = hanging();
    f.store.routines.ensureSchedule('s', f.now());
    f.store.routines.setScheduleMaxParallel('s', 1);
    f.define({ id: 'a', cron: '0 * * * *', schedule: 's' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    f.define({ id: 'b', cron: '0 0 1 1 *', schedule: 's' });
    const manual = runNow(f.control(), full('b'));
    f.advance(SEC);
    await f.pass();
    expect(f.scheduler.waitReasons().get(manual.id)).toBe('no free slot in schedule s (max_parallel 1)');
  });

  it('a job launch in flight holds a batch slot', async () => {
    f = hanging({ batchSlots: 1 });
    postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    const second = postJob(f.store, { command: 'work' }, f.now());
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.status(second.id)).toBe('PENDING');
  });

  it('batch slots bound jobs only: in one pass a routine run and one job start, the second job waits', async () => {
    f = new Fixture({ options: { batchSlots: 1 } });
    f.define({ id: 'a', cron: '0 * * * *' });
    const one = postJob(f.store, { command: 'work' }, f.now());
    const two = postJob(f.store, { command: 'work' }, f.now());
    f.clock.set(T0 + HOUR);
    const report = await f.pass();
    expect(report.submitted).toBe(2);
    expect([f.only('a').status, f.store.jobs.status(one.id), f.store.jobs.status(two.id)]).toEqual(['STARTING', 'FETCHED', 'PENDING']);
  });

  it('a launch that fails is not counted as submitted; in the background it ends the run the same way', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '0 * * * *' });
    f.backend.fail('submit', 'fork failed');
    f.clock.set(T0 + HOUR);
    expect((await f.pass()).submitted).toBe(0);
    f.close();
    f = new Fixture({ options: { launchInBackground: true } });
    f.define({ id: 'a', cron: '0 * * * *' });
    f.backend.fail('submit', 'fork failed');
    f.clock.set(T0 + HOUR);
    await f.pass();
    await Promise.all([...f.scheduler.ctx.launches.launching.values()].map((l) => l.done));
    expect(f.only('a')).toMatchObject({ status: 'ERROR', reason: 'fork failed' });
  });
});

describe('what others hold', () => {
  it('an external routine’s run does not take a slot in its schedule: Tend does not run it', async () => {
    f = new Fixture();
    f.store.routines.ensureSchedule('s', f.now());
    f.store.routines.setScheduleMaxParallel('s', 1);
    f.define({ id: 'ext', realtime: true, external: true, schedule: 's' });
    reportExternal(f.store, () => undefined, full('ext'), 'start', {}, f.now());
    f.define({ id: 'a', cron: '0 * * * *', schedule: 's' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    expect(f.only('a').status).toBe('STARTING');
  });

  it('a run STARTING under another scheduler’s live claim is not sent again', async () => {
    f = new Fixture();
    const def = f.define({ id: 'a', cron: '0 0 1 1 *' });
    const run = { ...newRun(def, T0, T0), status: 'STARTING' as const };
    f.store.runs.insert(run);
    f.store.ledger.claim('run', run.id, 'another-scheduler', f.now());
    await f.pass();
    expect(f.backend.submitted()).toEqual([]);
  });

  it('a job another worker has claimed is not launched here', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    f.store.ledger.claim('job', String(job.id), 'user@WORKER', f.now());
    await f.pass();
    expect(f.backend.submitted()).toEqual([]);
    expect(f.store.jobs.status(job.id)).toBe('PENDING');
  });
});
