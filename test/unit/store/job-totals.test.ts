// The number of jobs in each status is kept as jobs are written (job_totals, migration 10), so the
// status counts and /metrics read seven rows however many jobs the retention keeps. Each write of a
// job (insert, move, the retention's delete) must leave it equal to counting the jobs themselves.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobStatus } from '../../../main/engine/domain/types.js';
import { Store } from '../../../main/engine/store/store.js';
import { scratch } from '../../helpers/engine-fixture.js';

let dir: ReturnType<typeof scratch>;
let store: Store;
beforeEach(() => {
  dir = scratch('tend-job-totals-');
  store = Store.open(dir.db);
});
afterEach(() => {
  store.close();
  dir.remove();
});

function post(status: JobStatus = 'PENDING'): number {
  return store.jobs.insert({ name: 'j', command: 'true', args: [], cwd: null, env: {}, computer: null, dependencies: [], backend: null, slurm: null }, status, 1);
}

/** What counting the jobs themselves says, in the shape counts() gives. */
function counted(): Record<string, number> {
  const rows = store.db.prepare(`SELECT status, COUNT(*) AS n FROM jobs GROUP BY status`).all() as { status: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

describe('job counts by status', () => {
  it('follow inserts, moves and deletes', () => {
    const a = post();
    const b = post();
    post('WAITING');
    expect(store.jobs.counts()).toEqual({ PENDING: 2, WAITING: 1 });
    expect(store.jobs.cas(a, ['PENDING'], 'RUNNING', {}, 2)).toBe(true);
    expect(store.jobs.cas(a, ['RUNNING'], 'COMPLETED', {}, 3)).toBe(true);
    expect(store.jobs.cas(b, ['PENDING'], 'CANCEL', {}, 3)).toBe(true);
    expect(store.jobs.counts()).toEqual({ COMPLETED: 1, CANCEL: 1, WAITING: 1 });
    expect(store.history.removeJob(a)).toBe(true);
    expect(store.jobs.counts()).toEqual({ CANCEL: 1, WAITING: 1 });
    expect(store.jobs.counts()).toEqual(counted());
  });

  it('are read from the kept totals, not by counting the jobs', () => {
    post();
    store.db.prepare(`UPDATE job_totals SET n = 99 WHERE status = 'PENDING'`).run();
    expect(store.jobs.counts()).toEqual({ PENDING: 99 });
  });

  it('do not move when a job is written without changing its status', () => {
    const a = post();
    store.db.prepare(`UPDATE jobs SET updated_at = 5, name = 'renamed' WHERE id = ?`).run(a);
    store.db.prepare(`UPDATE jobs SET status = status WHERE id = ?`).run(a);
    expect(store.jobs.counts()).toEqual({ PENDING: 1 });
  });

  it('are taken back with a transaction rolled back', () => {
    const a = post();
    expect(() =>
      store.db.transaction(() => {
        store.jobs.cas(a, ['PENDING'], 'RUNNING', {}, 2);
        post();
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(store.jobs.counts()).toEqual({ PENDING: 1 });
  });

  it('of a database upgraded with jobs in it count the jobs it had', () => {
    for (let i = 0; i < 3; i++) post();
    const c = post();
    store.jobs.cas(c, ['PENDING'], 'ERROR', {}, 2);
    store.close();
    // As a tend.db of migration 9 would be: no job_totals, no triggers (nor what later migrations made).
    const raw = new Database(dir.db);
    raw.exec(`DROP TRIGGER job_totals_insert; DROP TRIGGER job_totals_move; DROP TRIGGER job_totals_delete; DROP TABLE job_totals;
      DROP TABLE routine_cycles; CREATE INDEX runs_routine_cycle ON runs(routine_id, cycle, scheduled_at, created_at);
      DROP TABLE run_links; ALTER TABLE runs DROP COLUMN prev_rowid; CREATE INDEX runs_routine_created ON runs(routine_id, created_at); PRAGMA user_version = 9`);
    raw.close();
    store = Store.open(dir.db);
    expect(store.jobs.counts()).toEqual({ PENDING: 3, ERROR: 1 });
    post();
    expect(store.jobs.counts()).toEqual({ PENDING: 4, ERROR: 1 });
  });
});
