// A realtime routine on a worker host: its heartbeats (the job touching $TEND_RUN_DIR/heartbeat)
// reach the daemon through the worker's reports; when they stop, the daemon has the worker stop
// the silent instance and start a new one there; an instance that dies is restarted there too.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { alive, assertBuilt, jobPid, killTracked, Pool, runDirsUnder, scratch, waitFor } from './harness.js';

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

it('carries heartbeats of a realtime routine on a worker, and restarts it there when they stop', { timeout: 120_000 }, async () => {
  box = scratch('tend-pool-rt-');
  pool = await Pool.start(box.dir);
  const w = pool.worker('u@w1');
  const since = Date.now();
  w.start();
  await pool.seen(w, since);
  const silence = join(box.dir, 'silence');
  // Beats every 200 ms until told to be silent, then lives on without a word.
  const script = `while [ ! -e '${silence}' ]; do touch "$TEND_RUN_DIR/heartbeat"; sleep 0.2; done; exec sleep 600`;
  pool.tendOk('routine', 'add', 'u@w1:feed', '--realtime', '--heartbeat', '3s', '--grace', '1s', '--', 'sh', '-c', script);

  const first = await waitFor(() => pool!.db.runs('u@w1:feed').find((r) => r.status === 'RUNNING'), 20_000, 'the feed to run on w1');
  const beat = () => pool!.db.get<{ heartbeat_at: number | null }>(`SELECT heartbeat_at FROM runs WHERE id = ?`, first.id)!.heartbeat_at ?? 0;
  const b0 = await waitFor(() => beat(), 10_000, 'a first heartbeat to arrive');
  // Beats keep arriving, and the run stays up past grace and interval.
  await waitFor(() => beat() > b0 + 4000, 15_000, 'heartbeats to keep arriving for 4 s');
  expect(pool.db.runs('u@w1:feed').map((r) => r.status)).toEqual(['RUNNING']);
  const pid = jobPid(w.runDirs().get(first.id)!)!;
  expect(alive(pid)).toBe(true);

  writeFileSync(silence, '');
  const ended = await waitFor(() => pool!.db.runs('u@w1:feed').find((r) => r.id === first.id && r.status !== 'RUNNING'), 30_000, 'the silent instance to be stopped');
  expect(ended.status).toBe('EXITED');
  expect(ended.reason).toMatch(/heartbeat silent/);
  await waitFor(() => !alive(pid), 15_000, 'the silent process on the worker host to end');
  const second = await waitFor(() => pool!.db.runs('u@w1:feed').find((r) => r.id !== first.id && (r.status === 'RUNNING' || r.status === 'STARTING')), 30_000, 'a new instance');
  expect(second.backend).toBe('pool:u@w1');
  await waitFor(() => w.runDirs().has(second.id), 20_000, 'the new instance’s directory on w1');
  const here = runDirsUnder(pool.dataDir);
  expect(here.has(first.id) || here.has(second.id)).toBe(false);
});
