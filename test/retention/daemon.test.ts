// `tend daemon run` applies the history retention on its own (TEND_KEEP_DAYS), and refuses a bad
// value by name without touching the data dir.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { paths } from '../../main/engine/datadir.js';
import { DAY_MS } from '../../main/engine/keep-days.js';
import { Store } from '../../main/engine/store/store.js';
import { scratch, tend, tendOk } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';
import { waitFor } from '../helpers/wait.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

function seed(dataDir: string): { oldDir: string; newDir: string } {
  const store = Store.open(paths(dataDir).db);
  const now = Date.now();
  const make = (id: string, at: number) => {
    const day = new Date(at).toISOString().slice(0, 10);
    const dir = join(paths(dataDir).runs, day, id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'stdout.log'), 'hello\n');
    store.runs.insert({ id, routineId: 'me@h:old', kind: 'batch', cycle: day, scheduledAt: at, attempt: 1, status: 'COMPLETED', reason: null, exitCode: 0, signal: null, backend: 'local', runDir: dir, manual: false, notBefore: null, createdAt: at, startedAt: at, endedAt: at + 1000, heartbeatAt: null });
    return dir;
  };
  const oldDir = make('old-1', now - 10 * DAY_MS);
  const newDir = make('new-1', now - 1 * DAY_MS);
  store.close();
  return { oldDir, newDir };
}

it('removes finished history older than TEND_KEEP_DAYS, rows and directories', async () => {
  box = scratch('tend-retention-daemon-');
  const { oldDir, newDir } = seed(box.dir);
  await new Daemon(box.dir, { TEND_KEEP_DAYS: '7', TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  const db = new Database(paths(box.dir).db, { readonly: true });
  try {
    await waitFor(() => db.prepare(`SELECT COUNT(*) FROM events WHERE type = 'history:pruned'`).pluck().get() === 1, 20_000, 'the sweep to be logged');
    expect(db.prepare(`SELECT id FROM runs ORDER BY id`).pluck().all()).toEqual(['new-1']);
    expect(db.prepare(`SELECT message FROM events WHERE type = 'history:pruned'`).pluck().get()).toBe('removed history older than 7 days: 1 runs, 0 jobs, 0 events, 1 job directories');
    // Both runs were counted as they finished: removing one takes nothing from the metrics' totals.
    expect(db.prepare(`SELECT n FROM run_totals WHERE routine_id = 'me@h:old' AND status = 'COMPLETED'`).pluck().get()).toBe(2);
  } finally {
    db.close();
  }
  expect(existsSync(oldDir)).toBe(false);
  expect(existsSync(newDir)).toBe(true);
  // `tend daemon status` says how long history is kept and what the last sweep removed.
  const status = await waitFor(() => {
    const s = tendOk<{ history: { keepDays: number; lastSweep: { runs: number; dirs: number } | null } | null }>(box.dir, ['daemon', 'status', '--json']);
    return s.history?.lastSweep ? s : null;
  }, 20_000, 'the sweep in daemon.state.json');
  expect(status.history).toMatchObject({ keepDays: 7, lastSweep: { runs: 1, dirs: 1 } });
  expect(tend(box.dir, ['daemon', 'status']).stdout).toMatch(/^history: {3}kept 7 days; last sweep \S+ removed 1 runs, 0 jobs, 0 events, 1 directories$/m);
});

it('refuses a bad TEND_KEEP_DAYS by name and changes nothing', async () => {
  box = scratch('tend-retention-bad-');
  const { oldDir } = seed(box.dir);
  const daemon = new Daemon(box.dir, { TEND_KEEP_DAYS: '0' });
  const exit = await daemon.exited;
  expect(exit.code).toBe(1);
  expect(daemon.stderr).toContain('TEND_KEEP_DAYS must be a whole number of days from 1 to 36500, or "forever", got "0"');
  expect(existsSync(oldDir)).toBe(true);
  expect(existsSync(paths(box.dir).pid)).toBe(false);
});
