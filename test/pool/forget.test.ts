// A worker host gone for good: `tend worker forget` ends its in-flight runs and jobs with an
// unknown outcome, puts the jobs it had only claimed back in the queue, and revokes its token.
// While it is online it is refused unless forced.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { assertBuilt, killTracked, lines, Pool, POOL_FIXTURES, scratch, waitFor } from './harness.js';

const MARK = join(POOL_FIXTURES, 'mark.sh');

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

it('forgets a dead worker: its run and job end unknown, a claimed job goes back to the queue, its token stops working', { timeout: 120_000 }, async () => {
  box = scratch('tend-pool-forget-');
  pool = await Pool.start(box.dir);
  const w = pool.worker('u@w1', 1);
  const since = Date.now();
  w.start();
  await pool.seen(w, since);
  const marker = join(box.dir, 'marker');
  pool.tendOk('routine', 'add', 'u@w1:slow', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', 'sh', MARK, marker, 'r', join(box.dir, 'never'));
  pool.tendOk('routine', 'run', 'u@w1:slow', '--no-wait');
  const [running] = await pool.postJobs([{ command: 'sh', args: [MARK, marker, 'j', join(box.dir, 'never')], computer: 'u@w1' }]);
  await waitFor(() => pool!.db.runs('u@w1:slow')[0]?.status === 'RUNNING' && pool!.db.job(running!)?.status === 'RUNNING', 30_000, 'the run and the job to run on w1');

  // The host dies. A job addressed to it is claimed with its (re-issued) token and never started.
  await w.kill('SIGKILL');
  const token = pool.token('u@w1');
  const [claimed] = await pool.postJobs([{ command: 'true', computer: 'u@w1' }]);
  const got = await pool.http<{ jobs: { id: number }[] }>('POST', '/api/worker/jobs/claim', { slots: 1 }, token);
  expect(got.body.value!.jobs.map((j) => j.id)).toEqual([claimed]);
  expect(pool.db.job(claimed!)!.status).toBe('FETCHED');

  // Heard from a moment ago: refused unless forced, and nothing changes.
  const early = pool.tend('worker', 'forget', 'u@w1');
  expect(early.code).toBe(1);
  expect(early.stderr).toMatch(/worker u@w1 was heard from \d+ s ago: it is online/);
  expect(pool.db.job(running!)!.status).toBe('RUNNING');

  const r = pool.tendOk<{ runs: number; failedJobs: number; requeuedJobs: number }>('worker', 'forget', 'u@w1', '--force', '--json');
  expect(r).toMatchObject({ runs: 1, failedJobs: 1, requeuedJobs: 1 });
  const run = await waitFor(() => pool!.db.runs('u@w1:slow').find((x) => x.status === 'ERROR'), 20_000, 'the run to be settled');
  expect(run.reason).toMatch(/worker u@w1 was forgotten \(last seen .*\): how this ended is unknown/);
  expect(pool.db.job(running!)).toMatchObject({ status: 'ERROR', reason: expect.stringMatching(/was forgotten/) });
  expect(pool.db.job(claimed!)).toMatchObject({ status: 'PENDING', fetched_by: null });
  expect(pool.db.events('worker:forgotten')).toHaveLength(1);
  expect(pool.tendOk<{ computer: string }[]>('worker', 'list', '--json').map((x) => x.computer)).not.toContain('u@w1');

  // The old token no longer works; forgetting twice says it is not there.
  const after = await pool.http('POST', '/api/worker/jobs/claim', { slots: 1 }, token);
  expect(after.status).toBe(401);
  const again = pool.tend('worker', 'forget', 'u@w1', '--force');
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/worker u@w1 not found/);

  // The processes outlived their worker, as jobs do: let them end before the directories go.
  writeFileSync(join(box.dir, 'never'), '');
  await waitFor(() => lines(marker).length === 2, 30_000, 'the orphaned run and job to end');
});
