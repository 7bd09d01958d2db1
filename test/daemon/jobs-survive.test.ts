// Running jobs outlive `tend daemon stop` and `restart`: nothing kills them, and the next daemon
// settles each exactly once (COMPLETED; the marker line count is the number of times it ran).
import Database from 'better-sqlite3';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { alive, assertBuilt, killTracked, REPO, scratch, tendOk, track } from '../helpers/cli.js';
import { stopOwner } from '../helpers/daemon.js';

const SCRIPT = join(REPO, 'test', 'daemon', 'fixtures', 'slow-marker.sh');
const N = 3;

interface RunRecord {
  id: string;
  routine_id: string;
  status: string;
  run_dir: string | null;
  reason: string | null;
}

let box: ReturnType<typeof scratch>;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await stopOwner(box.dir);
  // The jobs end by themselves once released; make sure of it before the dir goes.
  writeFileSync(join(box.dir, 'release'), '');
  await killTracked();
  box.remove();
});

function runs(dir: string): RunRecord[] {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT id, routine_id, status, run_dir, reason FROM runs ORDER BY routine_id, id`).all() as RunRecord[];
  } finally {
    db.close();
  }
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** N routines that wait for a release file, each asked to run now, all RUNNING under a daemon. */
async function startJobs(): Promise<{ dir: string; ids: string[]; pids: number[] }> {
  box = scratch('tend-survive-');
  const dir = box.dir;
  const started = tendOk<{ pid: number }>(dir, ['daemon', 'ensure', '--json'], { TEND_DAEMON_INTERVAL_MS: '100' });
  track(started.pid);
  const ids: string[] = [];
  for (let i = 0; i < N; i++) {
    const id = `survive/${i}`;
    // Due far in the future: only the manual run below starts it.
    tendOk(dir, ['routine', 'add', id, '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'sh', SCRIPT, join(dir, `marker${i}`), join(dir, 'release')]);
    const run = tendOk<{ id: string; status: string }>(dir, ['routine', 'run', id, '--no-wait', '--json']);
    expect(['PENDING', 'STARTING', 'RUNNING']).toContain(run.status);
    ids.push(id);
  }
  await waitFor(() => runs(dir).length === N && runs(dir).every((r) => r.status === 'RUNNING'), 30_000, 'every run to be RUNNING');
  await waitFor(() => [0, 1, 2].every((i) => lines(join(dir, `marker${i}.start`)).length === 1), 10_000, 'every job to have started');
  const pids = runs(dir).map((r) => (JSON.parse(readFileSync(join(r.run_dir!, 'pid.json'), 'utf8')) as { pid: number }).pid);
  for (const pid of pids) expect(alive(pid)).toBe(true);
  return { dir, ids, pids };
}

function expectSettledOnce(dir: string): void {
  const all = runs(dir);
  expect(all, JSON.stringify(all)).toHaveLength(N);
  for (const r of all) expect(r.status, `${r.routine_id}: ${r.reason}`).toBe('COMPLETED');
  for (let i = 0; i < N; i++) {
    expect(lines(join(dir, `marker${i}.start`))).toHaveLength(1);
    expect(lines(join(dir, `marker${i}`))).toHaveLength(1);
  }
}

it('jobs keep running across `daemon stop`, finish with no daemon, and the next daemon settles each once', async () => {
  const { dir, pids } = await startJobs();
  const stop = tendOk<{ stopped: number }>(dir, ['daemon', 'stop', '--json']);
  expect(alive(stop.stopped)).toBe(false);
  // No daemon: the jobs are still there, untouched.
  for (const pid of pids) expect(alive(pid)).toBe(true);
  expect(runs(dir).every((r) => r.status === 'RUNNING')).toBe(true);

  writeFileSync(join(dir, 'release'), '');
  await waitFor(() => [0, 1, 2].every((i) => lines(join(dir, `marker${i}`)).length === 1), 15_000, 'every job to finish with no daemon');
  await waitFor(() => pids.every((p) => !alive(p)), 10_000, 'the job processes to exit');
  // Nobody settled them yet.
  expect(runs(dir).every((r) => r.status === 'RUNNING')).toBe(true);

  const next = tendOk<{ pid: number; started: boolean }>(dir, ['daemon', 'ensure', '--json'], { TEND_DAEMON_INTERVAL_MS: '100' });
  track(next.pid);
  expect(next.started).toBe(true);
  await waitFor(() => runs(dir).every((r) => r.status !== 'RUNNING'), 20_000, 'the new daemon to settle the runs');
  expectSettledOnce(dir);
});

it('jobs keep running across `daemon restart` and are adopted and settled by the new daemon', async () => {
  const { dir, pids } = await startJobs();
  const r = tendOk<{ stopped: number; pid: number }>(dir, ['daemon', 'restart', '--json'], { TEND_DAEMON_INTERVAL_MS: '100' });
  track(r.pid);
  expect(r.pid).not.toBe(r.stopped);
  for (const pid of pids) expect(alive(pid)).toBe(true);
  // The new daemon polls the running jobs for a while without disturbing them.
  await waitFor(() => {
    const st = JSON.parse(readFileSync(join(dir, 'daemon.state.json'), 'utf8')) as { pid: number; lastPass: unknown };
    return st.pid === r.pid && st.lastPass !== null;
  }, 20_000, 'the new daemon to pass');
  expect(runs(dir).every((x) => x.status === 'RUNNING')).toBe(true);
  for (const pid of pids) expect(alive(pid)).toBe(true);

  writeFileSync(join(dir, 'release'), '');
  await waitFor(() => runs(dir).every((x) => x.status !== 'RUNNING'), 20_000, 'the new daemon to settle the runs');
  expectSettledOnce(dir);
  // And it did not start them again afterwards.
  await waitFor(() => {
    const st = JSON.parse(readFileSync(join(dir, 'daemon.state.json'), 'utf8')) as { lastHeartbeat: string };
    return Date.now() - Date.parse(st.lastHeartbeat) < 150;
  }, 5000, 'another pass');
  expectSettledOnce(dir);
});
