// Nothing Tend started is left running unsupervised: removing a routine (CLI, API — what the UI
// calls —, a schedule import that drops it) or moving it to another computer stops the instance
// it owns (TERM, then KILL after the grace) and settles its run, through a real daemon.
import Database from 'better-sqlite3';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { alive, REPO, scratch, tendOk, track } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

const HANG = join(REPO, 'test', 'daemon', 'fixtures', 'hang-pid.sh');

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

interface RunRec {
  id: string;
  routine_id: string;
  status: string;
  reason: string | null;
  ended_at: number | null;
}

function runs(dir: string, routine: string): RunRec[] {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT id, routine_id, status, reason, ended_at FROM runs WHERE routine_id LIKE ? ORDER BY created_at`).all(`%:${routine}`) as RunRec[];
  } finally {
    db.close();
  }
}

/** A daemon and a routine whose process is up; returns that process's pid. */
async function running(dir: string, routine: string, flags: string[], ignoreTerm = false, env: Record<string, string> = {}): Promise<{ d: Daemon; pid: number }> {
  const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100', ...env }).ready();
  const pidFile = join(dir, `${routine.replace(/\W/g, '_')}.pid`);
  tendOk(dir, ['routine', 'add', routine, ...flags, '--', 'sh', HANG, pidFile, ...(ignoreTerm ? ['ignore-term'] : [])]);
  if (!flags.includes('--realtime')) tendOk(dir, ['routine', 'run', routine, '--no-wait']);
  const pid = Number(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim(), 30_000, `${routine} to start`));
  track(pid);
  await waitFor(() => runs(dir, routine).some((r) => r.status === 'RUNNING'), 30_000, `${routine} to be RUNNING`);
  return { d, pid };
}

it('tend routine remove of a running realtime routine that ignores TERM: KILL after the grace, run STOPPED', async () => {
  box = scratch('tend-orphan-');
  const { d, pid } = await running(box.dir, 'orphan/rt', ['--realtime'], true);
  tendOk(box.dir, ['routine', 'remove', 'orphan/rt']);
  await waitFor(() => !alive(pid), 30_000, 'the instance to be killed');
  const [r] = runs(box.dir, 'orphan/rt');
  expect(r).toMatchObject({ status: 'STOPPED', reason: 'its routine was removed' });
  expect(r!.ended_at).not.toBeNull();
  // Not started again: there is no definition.
  expect(runs(box.dir, 'orphan/rt')).toHaveLength(1);
  expect(d.exit).toBeNull();
}, 90_000);

it('a daemon told to stop while it is killing such a process gives up the data dir only once the process is gone', async () => {
  box = scratch('tend-orphan-');
  const { d, pid } = await running(box.dir, 'orphan/stop', ['--realtime'], true, { TEND_KILL_GRACE_MS: '3000' });
  tendOk(box.dir, ['routine', 'remove', 'orphan/stop']);
  // The run is STOPPED before its process is: TERM is sent (and ignored), KILL waits for the grace.
  await waitFor(() => runs(box.dir, 'orphan/stop')[0]?.status === 'STOPPED', 10_000, 'the run to be STOPPED');
  expect(alive(pid)).toBe(true);
  d.child.kill('SIGTERM');
  // The moment the claim goes, the next owner may start: nothing of this one's may still be running.
  await waitFor(() => !existsSync(join(box.dir, 'daemon.pid')), 30_000, 'the daemon to release the data dir', 5);
  expect(alive(pid)).toBe(false);
  expect((await d.exited).code).toBe(0);
}, 90_000);

it('DELETE /api/routines/{id} (the UI) with a batch run in flight: the job is stopped, the run CANCELLED', async () => {
  box = scratch('tend-orphan-');
  const { pid } = await running(box.dir, 'orphan/batch', ['--at', '2099-01-01T00:00', '--tz', 'UTC']);
  const api = JSON.parse(readFileSync(join(box.dir, 'api.json'), 'utf8')) as { url: string; token: string };
  const id = runs(box.dir, 'orphan/batch')[0]!.routine_id;
  const res = await fetch(`${api.url}/api/routines/${encodeURIComponent(id)}`, { method: 'DELETE', headers: { authorization: `Bearer ${api.token}` } });
  expect(res.status).toBe(200);
  await waitFor(() => !alive(pid), 30_000, 'the batch job to be stopped');
  await waitFor(() => runs(box.dir, 'orphan/batch')[0]?.status === 'CANCELLED', 10_000, 'the run to be CANCELLED');
  expect(runs(box.dir, 'orphan/batch')[0]!.reason).toBe('its routine was removed');
}, 90_000);

it('a schedule import that drops a running realtime routine stops it', async () => {
  box = scratch('tend-orphan-');
  const { pid } = await running(box.dir, 'orphan/imported', ['--realtime', '--schedule', 'feeds']);
  const file = join(box.dir, 'feeds.yaml');
  writeFileSync(file, 'schedule: feeds\nroutines: []\n');
  const res = tendOk<{ removed: string[] }[]>(box.dir, ['schedule', 'import', file, '--json']);
  expect(res[0]!.removed).toHaveLength(1);
  await waitFor(() => !alive(pid), 30_000, 'the instance to be stopped');
  expect(runs(box.dir, 'orphan/imported')[0]).toMatchObject({ status: 'STOPPED', reason: 'its routine was removed' });
}, 90_000);

it('a realtime routine moved to another computer is stopped here (and its run ends EXITED, moved)', async () => {
  box = scratch('tend-orphan-');
  const { pid } = await running(box.dir, 'orphan/moving', ['--realtime']);
  tendOk(box.dir, ['routine', 'edit', 'orphan/moving', '--computer', 'someone@elsewhere']);
  await waitFor(() => !alive(pid), 30_000, 'the instance here to be stopped');
  const [r] = runs(box.dir, 'orphan/moving');
  expect(r!.status).toBe('EXITED');
  expect(r!.reason).toMatch(/^its routine moved from \S+ to someone@elsewhere$/);
}, 90_000);
