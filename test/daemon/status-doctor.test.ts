// `tend daemon status --json`: its fields, and an exit code that says whether a healthy daemon
// owns the data dir. `tend daemon doctor --json`: the findings a person can act on.
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { FIXTURES, scratch, tend, tendOk, track } from '../helpers/cli.js';
import { Daemon, readState } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

interface Finding {
  id: string;
  severity: 'ok' | 'info' | 'warn' | 'error';
  message: string;
  action: string | null;
}

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

const status = (dir: string) => {
  const r = tend(dir, ['daemon', 'status', '--json']);
  return { code: r.code, s: JSON.parse(r.stdout) as Record<string, any>, stderr: r.stderr };
};
const doctor = (dir: string) => {
  const r = tend(dir, ['daemon', 'doctor', '--json']);
  return { code: r.code, findings: JSON.parse(r.stdout) as Finding[] };
};
const ids = (f: Finding[]) => f.map((x) => x.id);

describe('daemon status', () => {
  it('no daemon and no database: unhealthy, exit 1, nothing created', () => {
    box = scratch('tend-status-');
    const { code, s } = status(box.dir);
    expect(code).toBe(1);
    expect(s).toMatchObject({ dataDir: box.dir, healthy: false, owner: null, api: null, inFlight: 0, nextDue: null, recentFailures: [] });
    expect(s.heartbeat).toEqual({ last: null, ageMs: null, fresh: false });
  });

  it('a healthy owner: exit 0 with ownership, heartbeat, api, queue counts, next due work and recent failures', async () => {
    box = scratch('tend-status-');
    const dir = box.dir;
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    tendOk(dir, ['routine', 'add', 'later', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'true']);
    tendOk(dir, ['routine', 'add', 'broken', '--at', '2098-01-01T00:00', '--tz', 'UTC', '--', 'sh', join(FIXTURES, 'exit3.sh')]);
    // `routine run` returns once the run is RUNNING or over; the failure is then seen by the daemon.
    const failedRun = tendOk<{ id: string }>(dir, ['routine', 'run', 'broken', '--no-wait', '--json']);
    tendOk(dir, ['job', 'post', '--json', '--', 'true']);
    await waitFor(() => status(dir).s.jobs.COMPLETED === 1, 15_000, 'the job to complete');
    await waitFor(() => status(dir).s.recentFailures.length === 1, 15_000, 'the run to fail');

    const { code, s } = status(dir);
    expect(code).toBe(0);
    expect(s.healthy).toBe(true);
    expect(s.dataDir).toBe(dir);
    expect(s.owner).toMatchObject({ pid: d.pid, kind: 'daemon', alive: true });
    expect(Date.parse(s.owner.startedAt)).not.toBeNaN();
    expect(s.heartbeat.fresh).toBe(true);
    expect(s.heartbeat.ageMs).toBeGreaterThanOrEqual(-5000);
    expect(s.heartbeat.ageMs).toBeLessThan(10_000);
    expect(s.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(s.api.url).toBe(readState(dir)!.api!.url);
    expect(s.runs).toMatchObject({ ERROR: 1 });
    expect(s.jobs).toMatchObject({ COMPLETED: 1 });
    expect(s.inFlight).toBe(0);
    expect(s.nextDue).toEqual({ routineId: expect.stringMatching(/:broken$/), at: '2098-01-01T00:00:00.000Z' });
    expect(s.recentFailures).toHaveLength(1);
    expect(s.recentFailures[0]).toMatchObject({ routineId: expect.stringMatching(/:broken$/), runId: failedRun.id });
    expect(s.lastPass).toMatchObject({ faults: 0 });
  });

  it('a live owner whose heartbeat went stale is not healthy (exit 1) until it beats again', async () => {
    box = scratch('tend-status-');
    const dir = box.dir;
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    d.child.kill('SIGSTOP');
    try {
      const st = JSON.parse(readFileSync(join(dir, 'daemon.state.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(dir, 'daemon.state.json'), JSON.stringify({ ...st, lastHeartbeat: new Date(Date.now() - 60_000).toISOString() }));
      const { code, s } = status(dir);
      expect(code).toBe(1);
      expect(s.healthy).toBe(false);
      expect(s.owner).toMatchObject({ pid: d.pid, alive: true });
      expect(s.heartbeat.fresh).toBe(false);
      expect(s.heartbeat.ageMs).toBeGreaterThan(55_000);
      const f = doctor(dir);
      expect(ids(f.findings)).toContain('stale-heartbeat');
      expect(f.code).toBe(1);
    } finally {
      d.child.kill('SIGCONT');
    }
    await waitFor(() => status(dir).code === 0, 10_000, 'status to be healthy again');
  });
});

describe('daemon doctor', () => {
  it('a stale pidfile: reported with what to do; gone once ensure took over', async () => {
    box = scratch('tend-doctor-');
    const dir = box.dir;
    const d = await new Daemon(dir).ready();
    expect(ids(doctor(dir).findings)).not.toContain('stale-pidfile');
    d.child.kill('SIGKILL');
    await d.exited;
    const f = doctor(dir).findings.find((x) => x.id === 'stale-pidfile');
    expect(f).toMatchObject({ severity: 'warn', message: expect.stringContaining(String(d.pid)), action: expect.stringContaining('tend daemon ensure') });
    const took = tendOk<{ pid: number }>(dir, ['daemon', 'ensure', '--json']);
    track(took.pid);
    expect(ids(doctor(dir).findings)).not.toContain('stale-pidfile');
  });

  it('api.json readable by others (mode 644): an error finding with the chmod to run; 600 is fine', async () => {
    box = scratch('tend-doctor-');
    const dir = box.dir;
    await new Daemon(dir).ready();
    const api = join(dir, 'api.json');
    expect(statSync(api).mode & 0o777).toBe(0o600);
    const before = doctor(dir);
    expect(ids(before.findings)).not.toContain('api-token-permissions');
    chmodSync(api, 0o644);
    const after = doctor(dir);
    const f = after.findings.find((x) => x.id === 'api-token-permissions');
    expect(f).toMatchObject({ severity: 'error', message: expect.stringContaining('644'), action: `chmod 600 ${api}` });
    expect(after.code).toBe(1);
  });

  it('a routine in ERROR: named, with where to look and how to restart it', async () => {
    box = scratch('tend-doctor-');
    const dir = box.dir;
    await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    // No retry: the failed run stays the latest (a one-shot's default retry would queue another).
    tendOk(dir, ['routine', 'add', 'fails', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', 'sh', join(FIXTURES, 'exit3.sh')]);
    tendOk(dir, ['routine', 'add', 'fine', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'true']);
    expect(ids(doctor(dir).findings)).not.toContain('routine-error');
    tendOk(dir, ['routine', 'run', 'fails', '--no-wait']);
    tendOk(dir, ['routine', 'run', 'fine', '--no-wait']);
    await waitFor(() => status(dir).s.runs.ERROR === 1 && status(dir).s.runs.COMPLETED === 1, 15_000, 'one run to fail and one to complete');
    const errors = doctor(dir).findings.filter((x) => x.id === 'routine-error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ severity: 'error', message: expect.stringMatching(/:fails is in ERROR/), action: expect.stringMatching(/tend logs .*:fails.*tend routine restart .*:fails/) });
  });

  it('a worker that was issued a token but never seen', () => {
    box = scratch('tend-doctor-');
    const dir = box.dir;
    tendOk(dir, ['routine', 'list']); // the database exists
    expect(ids(doctor(dir).findings)).not.toContain('worker-not-seen');
    tendOk(dir, ['worker', 'token', 'me@farhost']);
    const f = doctor(dir).findings.filter((x) => x.id === 'worker-not-seen');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'warn', message: 'worker me@farhost not seen since ever', action: expect.stringContaining('--computer me@farhost') });
  });
});
