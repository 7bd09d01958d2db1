// The `tend` CLI against a running daemon (`tend daemon run`, a pass every 100 ms): routine
// run / restart / stop report their result, `tend logs` tails and follows, `tend heartbeat` from
// inside a routine reaches the daemon, and one-off jobs are posted, listed, shown, cancelled and
// read through `tend job`.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { assertBuilt, cliWith, killTracked, scratch } from '../helpers/cli.js';
import { Daemon, NO_API, QUIET_FAST } from '../helpers/daemon.js';
import { FIX, REPO, SHARED_FIX, TEND, alive, epochMs, lines, pidRecord, sessionAlive } from '../helpers/engine-harness.js';

const { childEnv, tend, tendOk } = cliWith(NO_API);
let box: ReturnType<typeof scratch>;
let dir: string;
const GRACE = { TEND_KILL_GRACE_MS: '1000' };

beforeAll(async () => {
  assertBuilt();
  box = scratch('tend-cli-');
  dir = box.dir;
  await new Daemon(dir, QUIET_FAST).ready();
});
afterAll(async () => {
  // Stop what is still running (realtime routines), then the daemon.
  for (const r of ['cli/rt', 'cli/beat', 'cli/tree']) tend(dir, ['routine', 'stop', r], GRACE);
  await killTracked();
  box.remove();
});

interface RunView {
  id: string;
  status: string;
  reason: string | null;
  exitCode?: number | null;
}

function latestRun(routine: string): { id: string; status: string; run_dir: string | null; heartbeat_at: number | null; exit_code: number | null; reason: string | null } | null {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT id, status, run_dir, heartbeat_at, exit_code, reason FROM runs WHERE routine_id LIKE ? ORDER BY created_at DESC, rowid DESC LIMIT 1`).get(`%:${routine}`) as never) ?? null;
  } finally {
    db.close();
  }
}

/** The routine's events, one per line, for a failure message. */
function eventsOf(routine: string): string {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(`SELECT at, type, run_id, message FROM events WHERE routine_id LIKE ? ORDER BY id`).all(`%:${routine}`) as { at: number; type: string; run_id: string | null; message: string }[];
    return rows.map((e) => `${new Date(e.at).toISOString()} ${e.type} ${e.run_id ?? ''} ${e.message}`).join('\n');
  } finally {
    db.close();
  }
}

describe('tend routine run | restart | stop', () => {
  it('each reports its result; restart stops the old instance and starts a new one in one operation', async () => {
    tendOk(dir, ['routine', 'add', 'cli/rt', '--realtime', '--', SHARED_FIX('hang.sh')]);
    // A realtime routine starts by itself once defined.
    const first = await waitFor(() => (latestRun('cli/rt')?.status === 'RUNNING' ? latestRun('cli/rt') : null), 15_000, 'cli/rt RUNNING');
    const firstPid = pidRecord(first.run_dir!)!.pid;

    const restarted = tendOk<{ stopped: string[]; started: RunView }>(dir, ['routine', 'restart', 'cli/rt', '--json'], GRACE);
    expect(restarted.stopped).toEqual([first.id]);
    expect(restarted.started.status).toBe('RUNNING');
    expect(restarted.started.id).not.toBe(first.id);
    expect(alive(firstPid)).toBe(false);
    const second = latestRun('cli/rt')!;
    // A second instance started beside restart's (the micro-pass after the old one's exit, before
    // the fix in scheduler.ts) shows as a newer run; the events say who made it.
    expect(second.id, `latest run is not restart's; events:\n${eventsOf('cli/rt')}`).toBe(restarted.started.id);
    const secondPid = await waitFor(() => pidRecord(second.run_dir!)?.pid, 5000, 'the new pid');
    expect(alive(secondPid)).toBe(true);

    const stopped = tendOk<{ id: string; stopped: { id: string; status: string }[] }>(dir, ['routine', 'stop', 'cli/rt', '--json'], GRACE);
    expect(stopped.stopped).toEqual([{ id: second.id, status: 'STOPPED' }]);
    expect(alive(secondPid)).toBe(false);
    expect(tendOk(dir, ['routine', 'stop', 'cli/rt'], GRACE)).toMatch(/nothing was running/);

    const ran = tendOk<RunView>(dir, ['routine', 'run', 'cli/rt', '--json']);
    expect(ran.status).toBe('RUNNING');
    expect(latestRun('cli/rt')!.id).toBe(ran.id);
  });

  it('run of a batch routine reports how it ended (exit code 1 for ERROR)', async () => {
    tendOk(dir, ['routine', 'add', 'cli/fails', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', FIX('stamp.sh'), join(dir, 'fails'), 'x', '0.5', '3']);
    const r = tend(dir, ['routine', 'run', 'cli/fails', '--json']);
    const view = JSON.parse(r.stdout) as RunView;
    // --wait returns once the run is RUNNING (or already over); then it settles as exit 3.
    expect(['RUNNING', 'ERROR']).toContain(view.status);
    expect(r.code).toBe(view.status === 'ERROR' ? 1 : 0);
    const done = await waitFor(() => (latestRun('cli/fails')?.status === 'ERROR' ? latestRun('cli/fails') : null), 15_000, 'ERROR');
    expect(done).toMatchObject({ id: view.id, exit_code: 3, reason: 'exit 3' });
    const bad = tend(dir, ['routine', 'run', 'cli/nope']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not found/);
  });

  it('stop ends a routine with grandchildren: nothing of its session survives', async () => {
    tendOk(dir, ['routine', 'add', 'cli/tree', '--realtime', '--', SHARED_FIX('fork-grandchild.sh')]);
    const run = await waitFor(() => (latestRun('cli/tree')?.status === 'RUNNING' ? latestRun('cli/tree') : null), 15_000, 'cli/tree RUNNING');
    const gc = await waitFor(() => {
      try {
        return readFileSync(join(run.run_dir!, 'grandchildren'), 'utf8').trim().split(' ').map(Number);
      } catch {
        return null;
      }
    }, 15_000, 'the grandchildren');
    const pid = pidRecord(run.run_dir!)!.pid;
    for (const p of [pid, ...gc]) expect(alive(p)).toBe(true);
    tendOk(dir, ['routine', 'stop', 'cli/tree', '--json'], GRACE);
    for (const p of [pid, ...gc]) expect(alive(p), `process ${p}`).toBe(false);
    expect(sessionAlive(pid)).toEqual([]);
  });
});

describe('tend heartbeat', () => {
  it('from inside a routine, beats reach the daemon as the run’s heartbeat', async () => {
    tendOk(dir, ['routine', 'add', 'cli/beat', '--realtime', '--heartbeat', '30s', '--', FIX('beats.sh'), 'forever', '0.5', TEND]);
    // The script appends its line after `tend heartbeat` returns, so the beat can be recorded first.
    const { run, beats } = await waitFor(() => {
      const r = latestRun('cli/beat');
      if (!r?.heartbeat_at || !r.run_dir) return null;
      const b = lines(join(r.run_dir, 'beats'));
      return b.length ? { run: r, beats: b } : null;
    }, 20_000, 'a recorded heartbeat and the line the routine wrote after it');
    expect(run.heartbeat_at!).toBeGreaterThanOrEqual(epochMs(beats[0]!.split(' ')[1]!) - 1000);
    // Outside a routine it refuses, saying why.
    const outside = tend(dir, ['heartbeat']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/TEND_RUN_DIR/);
  });
});

describe('tend logs', () => {
  it('--tail N prints the last N lines of the latest run', async () => {
    tendOk(dir, ['routine', 'add', 'cli/count', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', FIX('counter.sh'), '500']);
    const run = tendOk<RunView>(dir, ['routine', 'run', 'cli/count', '--json']);
    await waitFor(() => latestRun('cli/count')?.status === 'COMPLETED', 15_000, 'COMPLETED');
    expect(tendOk(dir, ['logs', 'cli/count', '--tail', '3'])).toBe('n 499\nn 500\nEND\n');
    expect(tendOk(dir, ['logs', run.id, '--tail', '1'])).toBe('END\n');
    expect(tendOk(dir, ['logs', 'cli/count', '--stream', 'stderr'])).toBe('');
  });

  it('--follow shows lines as they are written and ends by itself when the run ends', async () => {
    tendOk(dir, ['routine', 'add', 'cli/ticker', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', FIX('ticker.sh'), '10', '0.3']);
    tendOk(dir, ['routine', 'run', 'cli/ticker', '--json']);
    const received: { line: string; at: number }[] = [];
    const follower = spawn(process.execPath, [TEND, 'logs', 'cli/ticker', '--follow'], { cwd: REPO, env: childEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    follower.stdout!.setEncoding('utf8').on('data', (s: string) => {
      buf += s;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        received.push({ line: buf.slice(0, i), at: Date.now() });
        buf = buf.slice(i + 1);
      }
    });
    const exited = new Promise<number | null>((r) => follower.on('exit', (code) => r(code)));
    // Ends on its own once the run is over and everything was read.
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') follower.kill('SIGKILL');
    expect(code).toBe(0);
    const ticks = received.filter((x) => x.line.startsWith('tick '));
    expect(ticks.map((x) => Number(x.line.split(' ')[1]))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(received.at(-1)?.line).toBe('END');
    // Shown as written: the first line reached us well before the last one was written.
    const lastWritten = epochMs(ticks.at(-1)!.line.split(' ')[2]!);
    expect(ticks[0]!.at).toBeLessThan(lastWritten);
    expect(latestRun('cli/ticker')!.status).toBe('COMPLETED');
  });

  it('--follow started while output pours in misses nothing between the tail and the new output', async () => {
    tendOk(dir, ['routine', 'add', 'cli/pour', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', 'bash', '-c', `for ((i = 1; i <= 40000; i++)); do echo "n $i"; (( i % 200 )) || sleep 0.01; done; echo END`]);
    tendOk(dir, ['routine', 'run', 'cli/pour', '--json']);
    await waitFor(() => {
      const r = latestRun('cli/pour');
      return r?.run_dir && lines(join(r.run_dir, 'stdout.log')).length > 100;
    }, 15_000, 'output to pour');
    const r = spawn(process.execPath, [TEND, 'logs', 'cli/pour', '--follow'], { cwd: REPO, env: childEnv(dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    r.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    const code = await new Promise((res) => r.on('exit', res));
    expect(code).toBe(0);
    const got = out.split('\n').filter((l) => l.startsWith('n ')).map((l) => Number(l.slice(2)));
    // The tail may begin mid-stream; from there on every line is there, once, in order.
    const first = got[1]!;
    expect(got.slice(1)).toEqual(Array.from({ length: 40000 - first + 1 }, (_, k) => first + k));
    expect(out.endsWith('END\n')).toBe(true);
  });
});

describe('tend job', () => {
  it('post prints the id (--json: {"id": …}); list, show, logs and cancel work on it', async () => {
    const plain = tendOk<string>(dir, ['job', 'post', '--', SHARED_FIX('exit0.sh')]);
    expect(plain.trim()).toMatch(/^\d+$/);
    const first = Number(plain.trim());
    const posted = tendOk<{ id: number }>(dir, ['job', 'post', '--json', '--after', String(first), '--name', 'second', '--', FIX('stamp.sh'), join(dir, 'jobs'), 'second', '0.05', '4']);
    expect(posted.id).toBe(first + 1);
    const hang = tendOk<{ id: number }>(dir, ['job', 'post', '--json', '--', SHARED_FIX('fork-grandchild.sh')]).id;

    interface JobView { id: number; name: string; status: string; exitCode: number | null; runDir: string | null; dependencies: number[]; createdAt: string; startedAt: string | null; endedAt: string | null; reason: string | null }
    const show = (id: number) => tendOk<JobView>(dir, ['job', 'show', String(id), '--json']);
    await waitFor(() => show(posted.id).status === 'ERROR', 20_000, 'the second job to fail');
    expect(show(first)).toMatchObject({ status: 'COMPLETED', exitCode: 0 });
    const second = show(posted.id);
    expect(second).toMatchObject({ name: 'second', status: 'ERROR', exitCode: 4, dependencies: [first], reason: 'exit 4' });
    // Started after the first ended (start times come from /proc start ticks: 10 ms steps).
    expect(Date.parse(second.startedAt!)).toBeGreaterThanOrEqual(Date.parse(show(first).endedAt!) - 20);
    expect(second.runDir).toMatch(new RegExp(`/runs/\\d{4}-\\d{2}-\\d{2}/job-${posted.id}$`));

    const list = tendOk<JobView[]>(dir, ['job', 'list', '--json']);
    expect(list.map((j) => j.id)).toEqual(expect.arrayContaining([first, posted.id, hang]));
    for (const j of list) expect(Object.keys(j)).toEqual(expect.arrayContaining(['id', 'name', 'status', 'exitCode', 'runDir', 'createdAt', 'startedAt', 'endedAt', 'dependencies']));
    expect(tendOk<JobView[]>(dir, ['job', 'list', '--status', 'error', '--json']).map((j) => j.id)).toContain(posted.id);

    expect(tendOk(dir, ['job', 'logs', String(first)])).toBe('hello from exit0\n');
    expect(tendOk(dir, ['job', 'logs', String(first), '--stream', 'stderr'])).toBe('a warning from exit0\n');

    const running = await waitFor(() => (show(hang).status === 'RUNNING' ? show(hang) : null), 15_000, 'the hanging job RUNNING');
    const gc = await waitFor(() => {
      try {
        return readFileSync(join(running.runDir!, 'grandchildren'), 'utf8').trim().split(' ').map(Number);
      } catch {
        return null;
      }
    }, 10_000, 'its grandchildren');
    const pid = pidRecord(running.runDir!)!.pid;
    expect(tendOk<{ id: number; status: string }>(dir, ['job', 'cancel', String(hang), '--json'], GRACE)).toEqual({ id: hang, status: 'CANCEL' });
    for (const p of [pid, ...gc]) expect(alive(p)).toBe(false);
    expect(show(hang)).toMatchObject({ status: 'CANCEL', reason: 'cancelled by hand' });
    const again = tend(dir, ['job', 'cancel', String(hang)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/CANCEL already/);

    // Waiting on an unknown job is refused at post, naming the flag.
    const bad = tend(dir, ['job', 'post', '--after', '99999', '--', '/bin/true']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--after: unknown job 99999/);
  });
});
