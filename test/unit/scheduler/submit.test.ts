// The submit phase on its own terms: a schedule's own max_parallel, what each launch outcome
// records and announces, realtime dependencies, and a run stopped while it was being submitted.
import { afterEach, describe, expect, it } from 'vitest';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { Fixture, MIN, SEC, full, scratch } from '../../helpers/engine-fixture.js';

let f: Fixture;
let dir: ReturnType<typeof scratch> | undefined;
afterEach(() => {
  f?.close();
  dir?.remove();
  dir = undefined;
});

function fixture(options: ConstructorParameters<typeof Fixture>[0] = {}): Fixture {
  dir = scratch('tend-submit-');
  return new Fixture({ db: dir.db, ...options });
}

describe("a schedule's max_parallel", () => {
  it('starts no more of its routines than it allows, says why the others wait, and counts the ones still running', async () => {
    f = fixture();
    for (const id of ['a', 'b', 'c']) f.define({ id, schedule: 'grp', cron: '0 * * * *' });
    f.define({ id: 'other', cron: '0 * * * *' });
    f.store.routines.setScheduleMaxParallel('grp', 2);

    f.advance(60 * MIN);
    const first = await f.pass();
    expect(first.submitted).toBe(3);
    const grp = ['a', 'b', 'c'].map((id) => f.only(id));
    const started = grp.filter((r) => r.status === 'STARTING');
    const held = grp.filter((r) => r.status === 'PENDING');
    expect(started).toHaveLength(2);
    expect(held).toHaveLength(1);
    expect(f.only('other').status).toBe('STARTING');
    expect(f.scheduler.waitReasons().get(held[0]!.id)).toBe('no free slot in schedule grp (max_parallel 2)');

    // Both still running (in the ledger): the third still waits.
    f.advance(SEC);
    await f.pass();
    expect(f.run(held[0]!.id).status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(held[0]!.id)).toBe('no free slot in schedule grp (max_parallel 2)');

    f.backend.finish(started[0]!.id);
    f.advance(SEC);
    await f.pass();
    expect(f.run(held[0]!.id).status).toBe('STARTING');
  });

  it('a run that ended does not hold its schedule slot', async () => {
    f = fixture();
    f.define({ id: 'a', schedule: 'grp', cron: '0 10 * * *' });
    f.define({ id: 'b', schedule: 'grp', cron: '30 10 * * *' });
    f.store.routines.setScheduleMaxParallel('grp', 1);
    f.advance(60 * MIN);
    await f.pass();
    f.backend.finish(f.only('a').id);
    f.advance(30 * MIN);
    await f.pass();
    expect(f.only('a').status).toBe('COMPLETED');
    expect(f.only('b').status).toBe('STARTING');
  });
});

describe('what a launch records', () => {
  it('a submitted run is announced with its backend and attempt', async () => {
    f = fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    const run = f.only('a');
    expect(f.events('run:submitted').map((e) => [e.runId, e.routineId, e.message])).toEqual([[run.id, full('a'), 'submitted to local (attempt 1)']]);
  });

  it('a launch the backend refuses (LAUNCH_REFUSED) is announced as refused with the reason alone', async () => {
    f = fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.fail('submit', 'LAUNCH_REFUSED: over quota');
    f.advance(MIN);
    await f.pass();
    const run = f.only('a');
    expect(run.status).toBe('ERROR');
    expect(run.reason).toBe('LAUNCH_REFUSED: over quota');
    expect(f.events('run:refused').map((e) => [e.runId, e.message])).toEqual([[run.id, 'LAUNCH_REFUSED: over quota']]);
    expect(f.events('run:launch-failed')).toEqual([]);
  });

  it('a launch that fails otherwise says it could not start, and the failed batch run is finalized', async () => {
    f = fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.fail('submit', 'spawn ENOENT');
    f.advance(MIN);
    await f.pass();
    const run = f.only('a');
    expect(f.events('run:launch-failed').map((e) => [e.runId, e.routineId, e.message])).toEqual([[run.id, full('a'), 'could not start: spawn ENOENT']]);
    expect(f.events('run:refused')).toEqual([]);
    expect(f.trigger('a').lastError).toBe('spawn ENOENT');
  });

  it('a submitted job is announced; a job whose launch fails ends ERROR with the reason and says so', async () => {
    f = fixture();
    const ok = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    expect(f.events('job:submitted').map((e) => [e.jobId, e.message])).toEqual([[ok.id, `job ${ok.id} submitted to local`]]);

    f.backend.fail('submit', 'spawn ENOENT');
    const bad = postJob(f.store, { command: 'work' }, f.now());
    f.advance(SEC);
    await f.pass();
    expect(f.store.jobs.get(bad.id)).toMatchObject({ status: 'ERROR', reason: 'spawn ENOENT', endedAt: f.now() });
    expect(f.events('job:launch-failed').map((e) => [e.jobId, e.message])).toEqual([[bad.id, `job ${bad.id} could not start: spawn ENOENT`]]);
    expect(f.store.ledger.get('job', String(bad.id))).toBeNull();
  });
});

describe('realtime dependencies', () => {
  it('a realtime routine after another waits until that one is RUNNING', async () => {
    f = fixture();
    f.define({ id: 'feed', realtime: true, command: 'collector' });
    f.define({ id: 'reader', realtime: true, command: 'reader', after: [full('feed')] });
    await f.pass();
    expect(f.only('feed').status).toBe('STARTING');
    expect(f.runs('reader')).toEqual([]);
    expect(f.scheduler.waitReasons().get(full('reader'))).toBe(`waiting for ${full('feed')} to be RUNNING`);

    for (let i = 0; i < 3 && f.runs('reader').length === 0; i++) {
      f.advance(SEC);
      await f.pass();
    }
    expect(f.only('feed').status).toBe('RUNNING');
    expect(f.only('reader').status).toBe('STARTING');
  });
});

describe('a run stopped while it was being submitted', () => {
  it('keeps its job in the ledger and asks the backend to stop it', async () => {
    f = fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    const submit = f.backend.submit.bind(f.backend);
    f.backend.submit = async (spec) => {
      const handle = await submit(spec);
      f.store.runs.cas(spec.runId, ['STARTING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
      return handle;
    };
    f.advance(MIN);
    await f.pass();
    const run = f.only('a');
    expect(f.store.ledger.get('run', run.id)?.handle).toEqual({ id: run.id });
    await expect.poll(() => f.backend.cancelled()).toEqual([run.id]);
  });
});
