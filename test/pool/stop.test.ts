// Stopping work that runs on a worker host from the CLI on the daemon host: `tend routine stop`
// and `tend job cancel` reach the worker at once (a command, and a wake-up for its long poll), the
// process group on the worker's host ends, and the run or job is settled there and here.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { alive, assertBuilt, jobPid, killTracked, lines, Pool, POOL_FIXTURES, scratch, waitFor, type Worker } from './harness.js';

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

async function oneWorker(batchjobs: number): Promise<{ pool: Pool; w: Worker }> {
  box = scratch('tend-pool-stop-');
  // Workers ask for 25 s long polls, allowed in full here (half the offline limit): a stop must wake the poll.
  pool = await Pool.start(box.dir, { env: { TEND_WORKER_OFFLINE_MS: '120000' } });
  const w = pool.worker('u@w1', batchjobs);
  const since = Date.now();
  w.start();
  await pool.seen(w, since);
  return { pool, w };
}

describe('stopping remote work', () => {
  it('stops a realtime routine running on a worker with tend routine stop', async () => {
    const { pool, w } = await oneWorker(0);
    pool.tendOk('routine', 'add', 'u@w1:feed', '--realtime', '--', 'sh', '-c', 'exec sleep 600');
    const run = await waitFor(() => pool.db.runs('u@w1:feed').find((r) => r.status === 'RUNNING'), 20_000, 'the feed to run on w1');
    const dir = w.runDirs().get(run.id)!;
    const pid = await waitFor(() => jobPid(dir), 5000, 'its pid');
    expect(alive(pid)).toBe(true);

    pool.tendOk('routine', 'stop', 'u@w1:feed');
    // Sooner than the 25 s poll: the stop woke it, it did not wait for it to run out.
    await waitFor(() => !alive(pid), 20_000, 'the process on the worker host to end');
    expect(pool.db.runs('u@w1:feed').map((r) => [r.id, r.status])).toEqual([[run.id, 'STOPPED']]);
    await waitFor(() => pool.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ledger`)!.n === 0, 10_000, 'the daemon to settle it');
    expect(pool.db.runs('u@w1:feed').length).toBe(1);
  });

  it('cancels a one-off job running on a worker with tend job cancel', async () => {
    const { pool, w } = await oneWorker(1);
    const marker = join(box.dir, 'marker');
    const [id] = await pool.postJobs([{ command: 'sh', args: [MARK, marker, 'c1', join(box.dir, 'never')] }]);
    await waitFor(() => pool.db.job(id!)?.status === 'RUNNING', 20_000, 'the job to run on w1');
    const dir = w.runDirs().get(`job-${id}`)!;
    const pid = await waitFor(() => jobPid(dir), 5000, 'its pid');

    pool.tendOk('job', 'cancel', String(id));
    await waitFor(() => !alive(pid), 20_000, 'the job on the worker host to end');
    expect(pool.db.job(id!)!.status).toBe('CANCEL');
    expect(lines(marker)).toEqual([]);
    // The worker is free again: the next job runs.
    const [next] = await pool.postJobs([{ command: 'sh', args: [MARK, marker, 'c2'] }]);
    await waitFor(() => pool.db.job(next!)?.status === 'COMPLETED', 20_000, 'the next job to complete');
    expect(lines(marker).map((l) => l.split(' ')[0])).toEqual(['c2']);
  });
});
