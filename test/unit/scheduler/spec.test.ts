// What the backend is asked to run (scheduler/spec.ts): every field of a routine's run and of a
// one-off job reaches the job spec, and the run directory is a pure function of the run.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { postJob } from '../../../main/engine/ops/jobs.js';
import { jobSpec, runDirFor, runSpec } from '../../../main/engine/scheduler/spec.js';
import { Fixture, HOUR, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

describe('job specs', () => {
  it('a routine run carries its definition, its attempt and due time, masked args and a run directory by day', async () => {
    f = new Fixture();
    f.define({
      id: 'etl/load',
      cron: '0 * * * *',
      command: '/usr/bin/env',
      args: ['--password=hunter2', 'x'],
      cwd: '/tmp',
      env: { A: '1' },
      log_cap: '1MiB',
      outputs: ['out/*.csv'],
      revision: 'abc123',
    });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('etl/load');
    expect(f.backend.job(run.id).spec).toEqual({
      runId: run.id,
      kind: 'run',
      realtime: false,
      routineId: full('etl/load'),
      jobId: null,
      attempt: 1,
      command: '/usr/bin/env',
      args: ['--password=hunter2', 'x'],
      cwd: '/tmp',
      env: { A: '1' },
      scheduledAt: T0 + HOUR,
      runDir: join(f.opts.dataDir, 'runs', '2026-01-05', run.id),
      logCapBytes: 1024 * 1024,
      outputs: ['out/*.csv'],
      revision: 'abc123',
      maskedArgs: ['--password=***', 'x'],
      slurm: null,
    });
  });

  it("a realtime routine's instance says so (the local backend prepares its restart)", async () => {
    f = new Fixture();
    f.define({ id: 'feeds/collector', realtime: true, command: 'collect' });
    await f.pass();
    expect(f.backend.job(f.only('feeds/collector').id).spec.realtime).toBe(true);
  });

  it('a one-off job is attempt 1 of job-ID, capped at 64 MiB, with no outputs or revision', async () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work', args: ['--token', 's3cret'], cwd: '/srv', env: { B: '2' } }, f.now());
    await f.pass();
    expect(f.backend.job(`job-${job.id}`).spec).toEqual({
      runId: `job-${job.id}`,
      kind: 'job',
      routineId: null,
      jobId: job.id,
      attempt: 1,
      command: 'work',
      args: ['--token', 's3cret'],
      cwd: '/srv',
      env: { B: '2' },
      scheduledAt: T0,
      runDir: join(f.opts.dataDir, 'runs', '2026-01-05', `job-${job.id}`),
      logCapBytes: 64 * 1024 * 1024,
      outputs: [],
      revision: null,
      maskedArgs: ['--token', '***'],
      slurm: null,
    });
  });

  it('a job not yet given a directory (as a pool worker claims it) gets the one by day', () => {
    f = new Fixture();
    const job = postJob(f.store, { command: 'work' }, f.now());
    expect(job.runDir).toBeNull();
    expect(jobSpec('/d', job).runDir).toBe(`/d/runs/2026-01-05/job-${job.id}`);
  });

  it('a run or job keeps the directory it was given, so a resubmission after a crash finds its files', async () => {
    f = new Fixture();
    const def = f.define({ id: 'etl/load', cron: '0 * * * *' });
    f.clock.set(T0 + HOUR);
    await f.pass();
    const run = f.only('etl/load');
    const job = postJob(f.store, { command: 'work' }, f.now());
    expect(runSpec('/d', { ...run, runDir: '/kept/run' }, def).runDir).toBe('/kept/run');
    expect(jobSpec('/d', { ...job, runDir: '/kept/job' }).runDir).toBe('/kept/job');
    expect(runSpec('/d', { ...run, runDir: null }, def).runDir).toBe(`/d/runs/2026-01-05/${run.id}`);
  });

  it('the run directory follows the UTC day the run was created', () => {
    expect(runDirFor('/d', 'r1', Date.UTC(2026, 0, 5, 23, 59))).toBe('/d/runs/2026-01-05/r1');
    expect(runDirFor('/d', 'r1', Date.UTC(2026, 0, 6, 0, 0))).toBe('/d/runs/2026-01-06/r1');
  });

  it('the run directory is what path.join makes of it, for every data dir and every id Tend makes (join is done once per data dir)', () => {
    const at = Date.UTC(2026, 0, 5, 12);
    // Ids as newRunId and jobs make them, and every character a run id may have, first or later.
    const ids = ['0mpv1f2rc-a00db3ab', 'job-12', 'r1', 'A', 'z', '0', '9', '_x', '-x', 'Az09_-.', 'a.b', 'a..b', 'x.'];
    for (const dir of ['/d', '/d/', '/a/../d', 'rel/d', '/d/./x/..', '/'])
      for (const id of ids) {
        expect(runDirFor(dir, id, at)).toBe(join(dir, 'runs', '2026-01-05', id));
        expect(runDirFor('/other', id, at)).toBe(join('/other', 'runs', '2026-01-05', id));
      }
  });

  it('an id that is not one plain name is refused: its directory would not be its own', () => {
    const at = Date.UTC(2026, 0, 5, 12);
    for (const id of ['..', '.', '', '.hidden', 'a/../b', 'x/y', '../x', 'x/..', 'a b', 'due:etl/load', 'a\\b', 'x\n'])
      expect(() => runDirFor('/d', id, at), id).toThrow(`not a run id: ${JSON.stringify(id)} (one name of letters, digits, . _ -)`);
  });
});
