// The daemon stops (`tend daemon stop`) while its workers run routines and one-off jobs, and starts
// again on the same address: the workers keep their jobs, report what ended meanwhile once the
// daemon is back, and nothing is lost or run twice.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { within } from '../helpers/wait.js';
import { assertBuilt, freePort, jobAlive, killTracked, lines, Pool, POOL_FIXTURES, scratch, waitFor } from './harness.js';

const MARK = join(POOL_FIXTURES, 'mark.sh');

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;

beforeAll(() => assertBuilt());
afterEach(async () => {
  if (box) for (const f of ['release-a', 'release-b']) writeFileSync(join(box.dir, f), '');
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

it('loses nothing and runs nothing twice when the daemon restarts while workers run jobs', { timeout: 120_000 }, async () => {
  box = scratch('tend-pool-restart-');
  // Workers ask for 25 s long polls, allowed in full here (half the offline limit): a stop they held up would show.
  pool = await Pool.start(box.dir, { port: await freePort(), env: { TEND_WORKER_OFFLINE_MS: '120000' } });
  const ws = [pool.worker('u@w1', 2), pool.worker('u@w2', 2)];
  const since = Date.now();
  for (const w of ws) w.start();
  for (const w of ws) await pool.seen(w, since);
  const marker = join(box.dir, 'marker');
  const a = join(box.dir, 'release-a');
  const b = join(box.dir, 'release-b');

  // Per worker: a routine run and two one-off jobs; half end while the daemon is down, half after.
  for (const w of ws) {
    pool.tendOk('routine', 'add', `${w.computer}:slow`, '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', 'sh', MARK, marker, `r-${w.name}`, w.name === 'w1' ? a : b);
    pool.tendOk('routine', 'run', `${w.computer}:slow`, '--no-wait');
  }
  const jobs = await pool.postJobs(['a', 'a', 'b', 'b'].map((r, i) => ({ command: 'sh', args: [MARK, marker, `j${i}`, r === 'a' ? a : b], name: `j${i}` })));
  await waitFor(() => pool!.db.jobs().every((j) => j.status === 'RUNNING'), 30_000, 'the jobs to run');
  await waitFor(() => pool!.db.runs().length === 2 && pool!.db.runs().every((r) => r.status === 'RUNNING'), 30_000, 'the routine runs to run');
  await waitFor(() => lines(`${marker}.start`).length === 6, 10_000, 'six starts');
  const runDirs = [...pool.db.jobs().map((j) => j.run_dir!), ...pool.db.runs().map((r) => r.run_dir!)];
  // Each run's directory is the one on its worker's host.
  for (const w of ws) expect(pool.db.runs(`${w.computer}:slow`)[0]!.run_dir).toBe(w.runDirs().get(pool.db.runs(`${w.computer}:slow`)[0]!.id));

  // Workers waiting in long polls do not hold up the stop.
  await within(pool.stopDaemon(), 20_000, 'the daemon to stop while workers wait in long polls');
  for (const d of runDirs) expect(jobAlive(d)).toBe(true);
  for (const w of ws) expect(w.running).toBe(true);
  writeFileSync(a, '');
  await waitFor(() => lines(marker).length === 3, 10_000, 'the a-jobs to end while the daemon is down');

  await pool.startDaemon();
  await waitFor(() => pool!.db.jobs().filter((j) => j.status === 'COMPLETED').length === 2, 30_000, 'the jobs that ended meanwhile to be reported');
  await waitFor(() => pool!.db.runs('u@w1:slow')[0]?.status === 'COMPLETED', 30_000, 'w1’s routine run to be reported');
  for (const d of runDirs.filter((x) => !existsSync(join(x, 'exit_code')))) expect(jobAlive(d)).toBe(true);
  expect(pool.db.runs('u@w2:slow')[0]!.status).toBe('RUNNING');
  writeFileSync(b, '');
  await waitFor(() => pool!.db.jobs().every((j) => j.status === 'COMPLETED') && pool!.db.runs().every((r) => r.status === 'COMPLETED'), 30_000, 'everything to complete');

  const got = lines(marker).map((l) => l.split(' ')[0]!);
  expect(got.sort()).toEqual(['j0', 'j1', 'j2', 'j3', 'r-w1', 'r-w2']);
  expect(lines(`${marker}.start`).length).toBe(6);
  expect(pool.db.jobs().map((j) => j.id)).toEqual(jobs);
  expect(pool.db.runs().length).toBe(2);
  expect(pool.db.events('job:failed')).toEqual([]);
  expect(pool.db.events('run:failed')).toEqual([]);
  // Every start command was fetched once; none expired or went anywhere else.
  const starts = pool.db.commands().filter((c) => c.kind === 'start');
  expect(starts.map((c) => c.fate)).toEqual(['fetched', 'fetched']);
  // Each worker holds nothing any more.
  for (const w of ws) await waitFor(() => pool!.db.worker(w.computer)!.running === 0, 10_000, `${w.computer} to report it holds nothing`);
});
