// What the submit phase does when a launch answers after the run or job it launched has moved on
// (the backend answers only once its gate opens: a launch in flight).
import { afterEach, describe, expect, it } from 'vitest';
import { cancelJob, stopRoutine } from '../../../main/engine/ops/control.js';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { moveRun } from '../../../main/engine/scheduler/moves.js';
import { ManualClock } from '../../../main/engine/clock.js';
import { Fixture, HOUR, T0, full } from '../../helpers/engine-fixture.js';
import { TestBackend } from '../../helpers/test-backend.js';
import { waitFor } from '../../helpers/wait.js';

let f: Fixture;
afterEach(() => f?.close());

/** A due hourly routine whose launch is held: resolves once the submit has reached the backend. */
async function launchHeld(gate: Promise<void>): Promise<{ passing: Promise<unknown>; runId: string }> {
  f = new Fixture();
  f.define({ id: 'etl/load', cron: '0 * * * *' });
  f.backend.submitGate = gate;
  f.clock.set(T0 + HOUR);
  const passing = f.pass();
  await waitFor(() => f.backend.calls.some((c) => c.op === 'submit'), 5000, 'the submit to start');
  return { passing, runId: f.only('etl/load').id };
}

describe('a launch that answers late', () => {
  it('a run already seen RUNNING when its launch answers is recorded and left running, not stopped', async () => {
    let open!: () => void;
    const { passing, runId } = await launchHeld(new Promise<void>((r) => (open = r)));
    expect(moveRun(f.store, runId, 'batch', 'started', { startedAt: f.now() })).toBe('RUNNING');
    open();
    await passing;
    expect(f.run(runId).status).toBe('RUNNING');
    expect(f.store.ledger.get('run', runId)?.handle).toEqual({ id: runId });
    expect(f.backend.cancelled()).toEqual([]);
    expect(f.scheduler.ctx.launches.stopping.size).toBe(0);
  });

  it('a launch that fails for a run cancelled meanwhile leaves it CANCELLED, with no launch failure reported', async () => {
    let fail!: (err: Error) => void;
    const { passing, runId } = await launchHeld(new Promise<void>((_, reject) => (fail = reject)));
    await stopRoutine(f.control(), full('etl/load'));
    fail(new Error('spawn ENOENT'));
    await passing;
    expect(f.run(runId)).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand' });
    expect(f.events('run:launch-failed')).toEqual([]);
    expect(f.store.ledger.get('run', runId)).toBeNull();
  });
});

describe('jobs cancelled while their launches are in flight', () => {
  it('two jobs cancelled by hand while both submits are in flight are both stopped once recorded', async () => {
    f = new Fixture();
    let open!: () => void;
    f.backend.submitGate = new Promise<void>((r) => (open = r));
    const a = postJob(f.store, { command: 'work' }, f.now());
    const b = postJob(f.store, { command: 'work' }, f.now());
    const passing = f.pass();
    await waitFor(() => f.backend.calls.filter((c) => c.op === 'submit').length === 2, 5000, 'both submits to start');
    await cancelJob(f.control(), a.id);
    await cancelJob(f.control(), b.id);
    open();
    await passing;
    await waitFor(() => f.backend.cancelled().length === 2, 5000, 'both launched jobs to be stopped');
    expect(f.backend.cancelled().sort()).toEqual([`job-${a.id}`, `job-${b.id}`].sort());
  });
});

describe('a launched run not yet seen running', () => {
  it('a STARTING run whose launch is recorded is not sent again by later passes while it stays queued', async () => {
    const clock = new ManualClock(T0);
    f = new Fixture({ clock, backend: new TestBackend('local', { clock, startAs: 'queued' }) });
    f.define({ id: 'etl/load', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('etl/load');
    expect(run.status).toBe('STARTING');
    f.advance(1000);
    await f.pass();
    f.advance(1000);
    await f.pass();
    expect(f.run(run.id).status).toBe('STARTING');
    expect(f.backend.count('submit')).toBe(1);
  });
});

describe('the backend a job runs on', () => {
  it('a job once fetched by a remote worker (pool:…) runs on this host; one naming another backend runs there', async () => {
    const slurm = new TestBackend('slurm');
    f = new Fixture({ makeBackend: (name) => (name === 'slurm' ? slurm : undefined) });
    const stale = postJob(f.store, { command: 'work' }, f.now());
    const elsewhere = postJob(f.store, { command: 'work' }, f.now());
    // What a stale claim leaves (jobs.ts: it keeps its last pool backend), and a job bound to slurm.
    f.store.db.prepare('UPDATE jobs SET backend = ? WHERE id = ?').run('pool:w1', stale.id);
    f.store.db.prepare('UPDATE jobs SET backend = ? WHERE id = ?').run('slurm', elsewhere.id);
    await f.pass();
    expect(f.backend.submitted()).toEqual([`job-${stale.id}`]);
    expect(slurm.submitted()).toEqual([`job-${elsewhere.id}`]);
    expect([f.store.jobs.get(stale.id)?.backend, f.store.jobs.get(elsewhere.id)?.backend]).toEqual(['local', 'slurm']);
  });
});

describe('job slots while launches are in flight', () => {
  /** A fixture with one job slot whose launches answer only when `open` is called. */
  function held(): { open: () => void } {
    let open!: () => void;
    f = new Fixture({ options: { launchInBackground: true, batchSlots: 1 } });
    f.backend.submitGate = new Promise<void>((r) => (open = r));
    return { open };
  }
  const submits = () => f.backend.calls.filter((c) => c.op === 'submit').map((c) => (c as { id: string }).id);

  it("a job's launch in flight holds the only job slot: the next job waits, also once it is recorded", async () => {
    const { open } = held();
    const a = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    await waitFor(() => submits().length === 1, 5000, 'the first job to be launching');
    const b = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    expect(submits()).toEqual([`job-${a.id}`]);
    open();
    await waitFor(() => f.store.ledger.get('job', String(a.id)) !== null, 5000, 'the first launch to be recorded');
    await f.pass();
    expect(submits()).toEqual([`job-${a.id}`]);
    expect(f.store.jobs.status(b.id)).toBe('PENDING');
  });

  it('a recorded job holds its slot: with two job slots and one job running, one of two jobs posted is launched', async () => {
    f = new Fixture({ options: { batchSlots: 2 } });
    const a = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    const b = postJob(f.store, { command: 'work' }, f.now());
    const c = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    expect(submits()).toEqual([`job-${a.id}`, `job-${b.id}`]);
    expect(f.store.jobs.status(c.id)).toBe('PENDING');
  });

  it("a routine's launch in flight holds no job slot: a job posted meanwhile is launched", async () => {
    const { open } = held();
    f.define({ id: 'etl/load', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    await waitFor(() => submits().length === 1, 5000, "the routine's run to be launching");
    const job = postJob(f.store, { command: 'work' }, f.now());
    await f.pass();
    expect(submits()).toEqual([f.only('etl/load').id, `job-${job.id}`]);
    open();
  });
});
