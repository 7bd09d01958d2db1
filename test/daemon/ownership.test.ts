// One data dir, one owner: daemons racing for it, a killed owner's stale pidfile, a pidfile naming
// a live process that is not the one that wrote it, idempotent ensure, restart.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { alive, assertBuilt, killTracked, procStartTime, scratch, tend, tendOk, track } from '../helpers/cli.js';
import { Daemon, readPidFile, readState, stopOwner } from '../helpers/daemon.js';

interface EnsureJson {
  pid: number;
  started: boolean;
  url: string | null;
  open: string | null;
}

let dirs: ReturnType<typeof scratch>[] = [];
const dataDir = () => {
  const d = scratch('tend-own-');
  dirs.push(d);
  return d.dir;
};

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const d of dirs) await stopOwner(d.dir);
  await killTracked();
  for (const d of dirs) d.remove();
  dirs = [];
});

/** A process that is certainly not a Tend daemon, alive until the test ends. */
function bystander(): number {
  const child = spawn('sleep', ['120'], { stdio: 'ignore' });
  return track(child.pid!);
}

describe('daemons racing for one data dir', () => {
  it('four started at once: exactly one owns it, the others name the owner and exit non-zero', async () => {
    const dir = dataDir();
    const all = [0, 1, 2, 3].map(() => new Daemon(dir));
    // The losers exit on their own; the winner keeps running.
    await waitFor(() => all.filter((d) => d.exit !== null).length === 3, 30_000, 'three of four daemons to give up');
    const winners = all.filter((d) => d.exit === null);
    expect(winners).toHaveLength(1);
    const owner = await winners[0]!.ready();
    expect(readPidFile(dir)?.pid).toBe(owner.pid);
    for (const loser of all.filter((d) => d !== owner)) {
      expect(loser.exit!.code, loser.stderr).not.toBe(0);
      expect(loser.exit!.code).not.toBeNull();
      expect(loser.stderr).toContain(`owned by daemon pid ${owner.pid}`);
    }
    // The owner is undisturbed by the losers (they did not remove its pidfile on the way out).
    expect(alive(owner.pid)).toBe(true);
    expect(readPidFile(dir)?.pid).toBe(owner.pid);
    const status = tend(dir, ['daemon', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).owner.pid).toBe(owner.pid);
  });

  it('a second `daemon run` next to a healthy owner refuses at once, naming it', async () => {
    const dir = dataDir();
    const owner = await new Daemon(dir).ready();
    const late = new Daemon(dir);
    const exit = await late.exited;
    expect(exit.code).toBe(1);
    expect(late.stderr).toMatch(new RegExp(`data dir .* is owned by daemon pid ${owner.pid}`));
    expect(readPidFile(dir)?.pid).toBe(owner.pid);
    expect(alive(owner.pid)).toBe(true);
  });
});

describe('stale ownership', () => {
  it('kill -9 leaves a stale pidfile; status says so and ensure takes over; a second ensure changes nothing', async () => {
    const dir = dataDir();
    const first = await new Daemon(dir).ready();
    first.child.kill('SIGKILL');
    await first.exited;
    // The pidfile survives the kill and names a dead process.
    expect(readPidFile(dir)?.pid).toBe(first.pid);
    const stale = tend(dir, ['daemon', 'status', '--json']);
    expect(stale.code).not.toBe(0);
    const s = JSON.parse(stale.stdout);
    expect(s.healthy).toBe(false);
    expect(s.owner).toMatchObject({ pid: first.pid, alive: false });

    const a = tendOk<EnsureJson>(dir, ['daemon', 'ensure', '--json']);
    track(a.pid);
    expect(a.started).toBe(true);
    expect(a.pid).not.toBe(first.pid);
    expect(readPidFile(dir)?.pid).toBe(a.pid);
    expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const pidBefore = readFileSync(join(dir, 'daemon.pid'), 'utf8');
    const startedBefore = (readState(dir) as unknown as { startedAt: string }).startedAt;

    const b = tendOk<EnsureJson>(dir, ['daemon', 'ensure', '--json']);
    expect(b).toEqual({ pid: a.pid, started: false, url: a.url, open: a.open });
    expect(readFileSync(join(dir, 'daemon.pid'), 'utf8')).toBe(pidBefore);
    expect((readState(dir) as unknown as { startedAt: string }).startedAt).toBe(startedBefore);
    expect(alive(a.pid)).toBe(true);
    expect(tend(dir, ['daemon', 'status', '--json']).code).toBe(0);
  });

  it('a pidfile naming a live pid with a different start time (PID reuse) is stale', async () => {
    const dir = dataDir();
    const other = bystander();
    const real = await waitFor(() => procStartTime(other), 5000, 'the bystander in /proc');
    writeFileSync(join(dir, 'daemon.pid'), `${JSON.stringify({ pid: other, startTime: real + 4321, startedAt: '2020-01-01T00:00:00.000Z', kind: 'daemon' })}\n`);

    const before = tend(dir, ['daemon', 'status', '--json']);
    expect(before.code).not.toBe(0);
    expect(JSON.parse(before.stdout).owner).toMatchObject({ pid: other, alive: false });

    const r = tendOk<EnsureJson>(dir, ['daemon', 'ensure', '--json']);
    track(r.pid);
    expect(r.started).toBe(true);
    expect(r.pid).not.toBe(other);
    expect(readPidFile(dir)?.pid).toBe(r.pid);
    // Taking over signals nobody: the bystander lives on.
    expect(alive(other)).toBe(true);
  });

  it('the same live pid with its real start time is an owner: a new daemon refuses', async () => {
    // The contrast to the test above: only the start time differs.
    const dir = dataDir();
    const other = bystander();
    const real = await waitFor(() => procStartTime(other), 5000, 'the bystander in /proc');
    writeFileSync(join(dir, 'daemon.pid'), `${JSON.stringify({ pid: other, startTime: real, startedAt: '2020-01-01T00:00:00.000Z', kind: 'daemon' })}\n`);
    const d = new Daemon(dir);
    expect((await d.exited).code).toBe(1);
    expect(d.stderr).toContain(`owned by daemon pid ${other}`);
  });

  it('a bare-pid pidfile naming a live process that is not Tend is stale', async () => {
    const dir = dataDir();
    const other = bystander();
    writeFileSync(join(dir, 'daemon.pid'), `${other}\n`);
    const r = tendOk<EnsureJson>(dir, ['daemon', 'ensure', '--json']);
    track(r.pid);
    expect(r.started).toBe(true);
    expect(readPidFile(dir)?.pid).toBe(r.pid);
    expect(alive(other)).toBe(true);
  });

  it('a lock file left by a dead claimant: four daemons racing past it still yield exactly one owner', async () => {
    const dir = dataDir();
    const dead = spawn('true');
    const deadPid = dead.pid!;
    await new Promise((r) => dead.on('exit', r));
    writeFileSync(join(dir, 'daemon.pid.lock'), String(deadPid));
    const all = [0, 1, 2, 3].map(() => new Daemon(dir));
    await waitFor(() => all.filter((d) => d.exit !== null).length === 3, 30_000, 'three of four daemons to give up');
    const owner = all.find((d) => d.exit === null)!;
    await owner.ready();
    expect(readPidFile(dir)?.pid).toBe(owner.pid);
    for (const d of all) if (d !== owner) expect(d.stderr).toContain(`owned by daemon pid ${owner.pid}`);
    expect(existsSync(join(dir, 'daemon.pid.lock'))).toBe(false);
  });
});

describe('stopping', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} stops \`daemon run\` within a slice of its 5 s interval and releases the pidfile`, async () => {
      const dir = dataDir();
      const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '5000' }).ready();
      // The first pass is done: the loop is now asleep for up to 5 s.
      const sent = performance.now();
      d.child.kill(signal);
      const exit = await d.exited;
      const took = exit.at - sent;
      expect(exit.code, d.stderr).toBe(0);
      expect(took).toBeLessThan(1500);
      expect(readPidFile(dir)).toBeNull();
    });
  }

  it('SIGTERM with a browser following /api/events still stops at once', async () => {
    const dir = dataDir();
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '5000' }).ready();
    const api = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as { url: string; token: string };
    const ctl = new AbortController();
    const res = await fetch(`${api.url}/api/events`, { headers: { authorization: `Bearer ${api.token}` }, signal: ctl.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read(); // connected
    const sent = performance.now();
    d.child.kill('SIGTERM');
    const exit = await d.exited;
    ctl.abort();
    expect(exit.code, d.stderr).toBe(0);
    expect(exit.at - sent).toBeLessThan(1500);
  });

  it('SIGTERM while a worker long-polls for commands still stops at once', async () => {
    const dir = dataDir();
    const { token } = tendOk<{ token: string }>(dir, ['worker', 'token', 'me@farhost', '--json']);
    expect(tend(dir, ['daemon', 'doctor', '--json']).stdout).toContain('worker-not-seen');
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '5000' }).ready();
    const api = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as { url: string };
    const poll = fetch(`${api.url}/api/worker/commands?computer=me@farhost&wait=30000`, { headers: { authorization: `Bearer ${token}` } }).then(
      (r) => r.status,
      () => 'dropped',
    );
    // The poll is parked once the daemon has recorded the worker as seen.
    await waitFor(() => !tend(dir, ['daemon', 'doctor', '--json']).stdout.includes('worker-not-seen'), 10_000, 'the worker to be seen');
    const sent = performance.now();
    d.child.kill('SIGTERM');
    const exit = await d.exited;
    expect(exit.code, d.stderr).toBe(0);
    expect(exit.at - sent).toBeLessThan(1500);
    // The poll ended with the daemon (answered early or cut), not after its 30 s.
    expect([200, 'dropped']).toContain(await poll);
  });

  it('`daemon stop` waits until the owner has exited; `restart` replaces it with a new owner', async () => {
    const dir = dataDir();
    const a = tendOk<EnsureJson>(dir, ['daemon', 'ensure', '--json']);
    track(a.pid);
    const r = tendOk<{ stopped: number; pid: number; started: boolean }>(dir, ['daemon', 'restart', '--json']);
    track(r.pid);
    expect(r.stopped).toBe(a.pid);
    expect(alive(a.pid)).toBe(false);
    expect(r.started).toBe(true);
    expect(r.pid).not.toBe(a.pid);
    expect(readPidFile(dir)?.pid).toBe(r.pid);

    const stop = tendOk<{ stopped: number }>(dir, ['daemon', 'stop', '--json']);
    expect(stop.stopped).toBe(r.pid);
    // Returned only once the process is gone, and it released its pidfile.
    expect(alive(r.pid)).toBe(false);
    expect(readPidFile(dir)).toBeNull();
    expect(tendOk<{ stopped: number | null }>(dir, ['daemon', 'stop', '--json']).stopped).toBeNull();
    expect(tend(dir, ['daemon', 'status', '--json']).code).not.toBe(0);
  });
});
