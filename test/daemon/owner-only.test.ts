// The data dir is the owner's alone: a fresh one and everything Tend writes in it (database, logs,
// state, pidfile, api.json, job directories and what the wrapper writes) are 0700 / 0600; the
// token never reaches daemon.log but is printed to the terminal that started the daemon; an
// existing looser data dir is tightened at start; doctor names open files and a token in a log.
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { assertBuilt, killTracked, scratch, tend, TEND, tendOk, track } from '../helpers/cli.js';
import { Daemon, readPidFile, stopOwner } from '../helpers/daemon.js';

interface Finding {
  id: string;
  severity: string;
  message: string;
  action: string | null;
}

let box: ReturnType<typeof scratch>;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await stopOwner(join(box.dir, 'data'));
  await killTracked();
  box.remove();
});

/** Every entry under `root` (itself included) with its permission bits. */
function modes(root: string): { path: string; mode: number; dir: boolean }[] {
  const out: { path: string; mode: number; dir: boolean }[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    out.push({ path: p, mode: st.mode & 0o777, dir: st.isDirectory() });
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(root);
  return out;
}
const open = (root: string) => modes(root).filter((e) => (e.mode & 0o077) !== 0).map((e) => `${e.path} ${e.mode.toString(8)}`);
const logText = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('daemon.log')).map((f) => readFileSync(join(dir, f), 'utf8')).join('');
const apiToken = (dir: string) => (JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as { token: string }).token;
const doctor = (dir: string) => JSON.parse(tend(dir, ['daemon', 'doctor', '--json']).stdout) as Finding[];

describe('a fresh data dir', () => {
  it('ensure: everything in it is owner-only, job files included; the token is printed, never logged', async () => {
    box = scratch('tend-owner-');
    const dir = join(box.dir, 'data');
    const work = join(box.dir, 'work');
    mkdirSync(work);
    const r = tend(dir, ['daemon', 'ensure'], { TEND_DAEMON_INTERVAL_MS: '100' });
    expect(r.code, r.stderr).toBe(0);
    // Not our child: tracked so that it is stopped before its data dir is removed.
    track(readPidFile(dir)!.pid);
    const token = apiToken(dir);
    expect(r.stdout).toContain(`/#token=${token}`);
    const asJson = tendOk<{ open: string; url: string }>(dir, ['daemon', 'ensure', '--json']);
    expect(asJson.open).toBe(`${asJson.url}/#token=${token}`);

    // A job that writes both streams, beats, and leaves a file of its own in its working directory.
    const job = tendOk<{ id: number }>(dir, ['job', 'post', '--json', '--cwd', work, '--', 'sh', '-c', `echo out; echo err >&2; "$0" "$1" heartbeat; echo mine > own.txt`, process.execPath, TEND]);
    await waitFor(() => tendOk<{ status: string }>(dir, ['job', 'show', String(job.id), '--json']).status === 'COMPLETED', 20_000, 'the job to complete');
    const jobDir = modes(join(dir, 'runs')).find((e) => e.dir && existsSync(join(e.path, 'exit_code')))!.path;
    // No run.sh: a batch waiter, started before the job, ran it (worker/local/batch-waiters.ts);
    // its wrapper.log is made only when it has something to say.
    for (const f of ['manifest.json', 'pid.json', 'stdout.log', 'stderr.log', 'exit_code', 'heartbeat', 'launched']) expect(readdirSync(jobDir)).toContain(f);
    for (const f of ['tend.db', 'tend.db-wal', 'tend.db-shm', 'daemon.log', 'daemon.pid', 'daemon.state.json', 'api.json']) expect(readdirSync(dir)).toContain(f);

    expect(open(dir)).toEqual([]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(jobDir, 'stdout.log')).mode & 0o777).toBe(0o600);
    // The routine's own files keep the umask Tend was started with.
    expect(statSync(join(work, 'own.txt')).mode & 0o777).toBe(0o666 & ~process.umask());

    expect(logText(dir)).not.toContain(token);
    expect(logText(dir)).not.toContain('#token=');
    expect(doctor(dir).map((f) => f.id)).not.toContain('open-permissions');
  });

  it('run: the address with the token goes to the terminal, daemon.log stays free of it', async () => {
    box = scratch('tend-owner-');
    const dir = join(box.dir, 'data');
    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    const token = apiToken(dir);
    await waitFor(() => d.stdout.includes(`/#token=${token}`), 30_000, 'the address on stdout');
    expect(logText(dir)).toContain('API at');
    expect(logText(dir)).not.toContain(token);
    expect(open(dir)).toEqual([]);
  });

  it("a realtime routine's standby and the instance started from it are owner-only too", async () => {
    box = scratch('tend-owner-');
    const dir = join(box.dir, 'data');
    const work = join(box.dir, 'work');
    mkdirSync(work);
    await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    // Dies once its standby is ready (restarted at once, from it), then lives.
    const first = 'until ls "$TEND_RUN_DIR"/../../../standby/*/pid.json > /dev/null 2>&1; do sleep 0.05; done; : > died; exit 1';
    tendOk(dir, ['routine', 'add', 'feeds/owner', '--realtime', '--cwd', work, '--', 'sh', '-c', `if [ -e died ]; then echo again; exec sleep 60; fi; ${first}`]);
    const standbys = join(dir, 'standby');
    const fromStandby = await waitFor(() => {
      const again = modes(join(dir, 'runs')).find((e) => e.dir && existsSync(join(e.path, 'stdout.log')) && readFileSync(join(e.path, 'stdout.log'), 'utf8') === 'again\n');
      return again && !existsSync(join(again.path, 'run.sh')) ? again.path : null;
    }, 30_000, 'the instance started from the standby');
    // And the standby for the instance after it.
    await waitFor(() => existsSync(standbys) && readdirSync(standbys).some((n) => existsSync(join(standbys, n, 'pid.json'))), 30_000, 'the next standby');
    for (const f of ['manifest.json', 'pid.json', 'stdout.log', 'stderr.log', 'launched']) expect(readdirSync(fromStandby)).toContain(f);
    expect(open(dir)).toEqual([]);
  });
});

describe('an existing data dir left open', () => {
  it('doctor names the open entries and a token in a log, each with its fix; start tightens them', async () => {
    box = scratch('tend-owner-');
    const dir = join(box.dir, 'data');
    mkdirSync(join(dir, 'runs', '2026-01-01', 'r1'), { recursive: true });
    writeFileSync(join(dir, 'daemon.log'), '2026-01-01T00:00:00.000Z API at http://127.0.0.1:1 ; open http://127.0.0.1:1/#token=abc\n');
    writeFileSync(join(dir, 'runs', '2026-01-01', 'r1', 'stdout.log'), 'old\n');
    for (const p of [dir, join(dir, 'runs'), join(dir, 'runs', '2026-01-01'), join(dir, 'runs', '2026-01-01', 'r1')]) chmodSync(p, 0o755);
    chmodSync(join(dir, 'daemon.log'), 0o644);
    chmodSync(join(dir, 'runs', '2026-01-01', 'r1', 'stdout.log'), 0o666);

    const before = doctor(dir);
    const perms = before.find((f) => f.id === 'open-permissions');
    expect(perms?.severity).toBe('error');
    expect(perms?.message).toMatch(/^6 entries .*: \. \(755\), .*runs\/2026-01-01\/r1\/stdout\.log \(666\)/);
    expect(perms?.action).toBe(`chmod -R go-rwx ${dir}`);
    const leak = before.find((f) => f.id === 'token-in-log');
    expect(leak?.severity).toBe('error');
    expect(leak?.action).toContain(`rm ${join(dir, 'daemon.log')} ${join(dir, 'api.json')}`);

    const d = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    // The directory, its files, runs/ and the day directories: what puts every job out of reach.
    for (const p of [dir, join(dir, 'runs'), join(dir, 'runs', '2026-01-01')]) expect(statSync(p).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'daemon.log')).mode & 0o777).toBe(0o600);
    expect(d.stderr).toContain('made owner-only');
    await stopOwner(dir);

    // What is left open sits in directories nobody else may enter: out of reach, not reported.
    expect(statSync(join(dir, 'runs', '2026-01-01', 'r1', 'stdout.log')).mode & 0o777).toBe(0o666);
    expect(doctor(dir).map((f) => f.id)).not.toContain('open-permissions');
    // Opened again by hand, it is reported again, the file inside included.
    chmodSync(join(dir, 'runs', '2026-01-01'), 0o711);
    chmodSync(join(dir, 'runs'), 0o711);
    chmodSync(dir, 0o711);
    expect(doctor(dir).find((f) => f.id === 'open-permissions')?.message).toContain('runs/2026-01-01/r1/stdout.log (666)');
  });
});
