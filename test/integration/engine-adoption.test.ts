// Killing the process that hosts the engine at any moment neither orphans nor repeats work: jobs
// outlive a SIGKILLed daemon, and the next daemon on the same data dir settles every one exactly
// once with its true exit code (marker lines counted, run/job rows, events, one job dir per run).
// And a manifest whose pid is alive but started at another time is never adopted as running.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { basename, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newRun } from '../../main/engine/domain/run.js';
import { postJob } from '../../main/engine/ops/jobs.js';
import { moveJob } from '../../main/engine/scheduler/moves.js';
import { runDirFor } from '../../main/engine/scheduler/spec.js';
import { settings } from '../../main/engine/settings.js';
import { Store } from '../../main/engine/store/store.js';
import { jobShell, localWrapperScript } from '../../worker/local/tools.js';
import { VANISHED_REASON } from '../../worker/local/index.js';
import { readProcStat } from '../../worker/jobdir/proc.js';
import { assertBuilt, cliWith, killTracked, scratch } from '../helpers/cli.js';
import { Daemon, NO_API, QUIET_FAST } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { EngineHarness, FIX, SHARED_FIX, alive, jobDirs, lines, pidRecord } from '../helpers/engine-harness.js';


const { tendOk } = cliWith(NO_API);

interface Row {
  id: string;
  status: string;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  run_dir: string | null;
}

function query<T>(dir: string, sql: string): T[] {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const runRows = (dir: string) => query<Row & { routine_id: string }>(dir, `SELECT id, routine_id, status, exit_code, signal, reason, run_dir FROM runs ORDER BY routine_id`);
const jobRows = (dir: string) => query<Row>(dir, `SELECT CAST(id AS TEXT) AS id, status, exit_code, signal, reason, run_dir FROM jobs ORDER BY id`);
const settleEvents = (dir: string) =>
  query<{ type: string; run_id: string | null; job_id: number | null }>(
    dir,
    `SELECT type, run_id, job_id FROM events WHERE type IN ('run:completed', 'run:failed', 'job:completed', 'job:failed') ORDER BY id`,
  );
const TERMINAL = new Set(['COMPLETED', 'ERROR', 'CANCELLED', 'CANCEL']);

let box: ReturnType<typeof scratch> | null = null;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await killTracked();
  if (box) {
    writeFileSync(join(box.dir, 'releaseA'), '');
    writeFileSync(join(box.dir, 'releaseB'), '');
  }
  box?.remove();
  box = null;
});

/** Until every run and job is terminal; on timeout, says which are not and what the store holds. */
async function allSettled(dir: string, timeoutMs: number): Promise<void> {
  try {
    await waitFor(() => [...runRows(dir), ...jobRows(dir)].every((r) => TERMINAL.has(r.status)), timeoutMs, 'every run and job to settle');
  } catch (err) {
    const open = [...runRows(dir), ...jobRows(dir)].filter((r) => !TERMINAL.has(r.status));
    throw new Error(`${(err as Error).message}\nnot settled: ${JSON.stringify(open)}\nleases: ${JSON.stringify(query(dir, 'SELECT * FROM leases'))}\nledger: ${JSON.stringify(query(dir, 'SELECT kind, ref_id FROM ledger'))}\nevents: ${JSON.stringify(query(dir, `SELECT type, run_id, job_id, message FROM events WHERE level != 'info' ORDER BY id DESC LIMIT 20`))}`);
  }
}

/** Every run and job settled once: exactly one settle event each, the ledger empty, one dir each. */
function expectSettledOnce(dir: string, expectedDirs: number): void {
  const events = settleEvents(dir);
  const runs = runRows(dir);
  const jobs = jobRows(dir);
  for (const r of runs) expect(events.filter((e) => e.run_id === r.id), `settle events of run ${r.routine_id}`).toHaveLength(1);
  for (const j of jobs) expect(events.filter((e) => String(e.job_id) === j.id), `settle events of job ${j.id}`).toHaveLength(1);
  expect(query(dir, `SELECT * FROM ledger`)).toEqual([]);
  const dirs = jobDirs(dir);
  expect(dirs).toHaveLength(expectedDirs);
  // One directory per run, named after it, and each row points at its own.
  const named = new Set(dirs.map((d) => basename(d)));
  for (const r of runs) expect(named.has(r.id), `dir of run ${r.id}`).toBe(true);
  for (const j of jobs) expect(named.has(`job-${j.id}`), `dir of job ${j.id}`).toBe(true);
  expect(new Set([...runs, ...jobs].map((r) => r.run_dir)).size).toBe(runs.length + jobs.length);
}

describe('kill -9 of the engine host', () => {
  it('jobs survive it; the next daemon settles each exactly once with its true exit code', async () => {
    box = scratch('tend-kill9-');
    const dir = box.dir;
    const first = await new Daemon(dir, QUIET_FAST).ready();
    const relA = join(dir, 'releaseA');
    const relB = join(dir, 'releaseB');

    // Four routine runs and ten one-off jobs: 14 > max_parallel 8, so six wait in the queue.
    // Half are released while no daemon is alive, half after the next one took over.
    const routineCodes = [0, 3, 0, 7];
    routineCodes.forEach((code, i) => {
      tendOk(dir, ['routine', 'add', `adopt/${i}`, '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', FIX('gated.sh'), join(dir, `r${i}`), i < 2 ? relA : relB, String(code)]);
      tendOk(dir, ['routine', 'run', `adopt/${i}`, '--no-wait', '--json']);
    });
    const jobCodes = [0, 5, 0, 0, 2, 0, 0, 9, 0, 0];
    const jobIds = jobCodes.map((code, k) => tendOk<{ id: number }>(dir, ['job', 'post', '--json', '--', FIX('gated.sh'), join(dir, `j${k}`), k % 2 ? relA : relB, String(code)]).id);

    const started = () => [...routineCodes.map((_, i) => `r${i}`), ...jobCodes.map((_, k) => `j${k}`)].filter((m) => lines(join(dir, `${m}.start`)).length > 0);
    await waitFor(() => started().length === 8, 30_000, 'eight jobs to be running');
    const running = jobDirs(dir).map((d) => pidRecord(d)!.pid);
    expect(running).toHaveLength(8);

    await first.kill9();
    for (const pid of running) expect(alive(pid), `job process ${pid} after the daemon was killed`).toBe(true);

    // With no daemon alive, the A half of what runs finishes; nobody settles it yet.
    writeFileSync(relA, '');
    const launchedA = started().filter((m) => ['r0', 'r1', 'j1', 'j3', 'j5', 'j7', 'j9'].includes(m));
    await waitFor(() => launchedA.every((m) => lines(join(dir, m)).length === 1), 15_000, 'the released jobs to finish with no daemon');
    expect(runRows(dir).filter((r) => r.status === 'RUNNING').length + jobRows(dir).filter((j) => j.status === 'RUNNING' || j.status === 'FETCHED').length).toBe(8);

    const second = await new Daemon(dir, QUIET_FAST).ready();
    writeFileSync(relB, '');
    await allSettled(dir, 30_000);

    for (const [i, code] of routineCodes.entries()) {
      const r = runRows(dir).find((x) => x.routine_id.endsWith(`:adopt/${i}`))!;
      expect(r, `run of adopt/${i}`).toMatchObject({ status: code === 0 ? 'COMPLETED' : 'ERROR', exit_code: code, signal: null });
      expect(lines(join(dir, `r${i}.start`))).toHaveLength(1);
      expect(lines(join(dir, `r${i}`))).toHaveLength(1);
    }
    for (const [k, code] of jobCodes.entries()) {
      const j = jobRows(dir).find((x) => Number(x.id) === jobIds[k])!;
      expect(j, `job ${k}`).toMatchObject({ status: code === 0 ? 'COMPLETED' : 'ERROR', exit_code: code, signal: null });
      expect(lines(join(dir, `j${k}.start`)), `launches of job ${k}`).toHaveLength(1);
      expect(lines(join(dir, `j${k}`)), `ends of job ${k}`).toHaveLength(1);
    }
    expectSettledOnce(dir, routineCodes.length + jobCodes.length);
    // And the new daemon does not start anything again afterwards.
    const seen = second.lastPass();
    await waitFor(() => second.lastPass() !== seen, 5000, 'another pass');
    expect(jobDirs(dir)).toHaveLength(routineCodes.length + jobCodes.length);
    expect(second.exit).toBeNull();
  }, 90_000);

  it('a stream of short jobs survives repeated kill -9 at arbitrary moments: every job runs and settles once', async () => {
    box = scratch('tend-kill9-stream-');
    const dir = box.dir;
    const marker = join(dir, 'marker');
    const N = 40;
    // Exit codes 0 (most), 1 and 4 (some): the settled code must be the one the process exited with.
    const code = (k: number) => (k % 7 === 3 ? 4 : k % 5 === 1 ? 1 : 0);
    // Posted before any daemon runs: the first daemon starts on a full queue.
    const store = Store.open(join(dir, 'tend.db'));
    const ids = store.tx(() => Array.from({ length: N }, (_, k) => postJob(store, { command: FIX('stamp.sh'), args: [marker, String(k), '0.15', String(code(k))] }, Date.now()).id));
    store.close();
    const ended = () => lines(marker).filter((l) => l.startsWith('end ')).length;

    // Kill the host three times while the stream flows, each time after some more progress.
    for (const target of [6, 16, 26]) {
      const d = await new Daemon(dir, QUIET_FAST).ready();
      await waitFor(() => ended() >= target, 30_000, `${target} jobs to end`);
      await d.kill9();
    }
    await new Daemon(dir, QUIET_FAST).ready();
    await allSettled(dir, 30_000);

    const all = lines(marker);
    for (let k = 0; k < N; k++) {
      const row = jobRows(dir).find((x) => Number(x.id) === ids[k]);
      expect(all.filter((l) => l.startsWith(`start ${k} `)), `launches of job ${k}: ${JSON.stringify(row)}`).toHaveLength(1);
      expect(all.filter((l) => l.startsWith(`end ${k} `)), `ends of job ${k}`).toHaveLength(1);
      const j = jobRows(dir).find((x) => Number(x.id) === ids[k])!;
      expect(j, `job ${k}`).toMatchObject({ status: code(k) === 0 ? 'COMPLETED' : 'ERROR', exit_code: code(k), signal: null });
    }
    expectSettledOnce(dir, N);
  }, 120_000);
});

describe('adoption checks the process identity', () => {
  let h: EngineHarness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('a ledger entry whose manifest names a live pid that started at another time settles as vanished, never RUNNING', async () => {
    h = new EngineHarness({ start: false });
    const def = h.define('adopt/impostor', { at: '2099-01-01T00:00', command: '/bin/true' });
    // A live process that is not the job: a sleep of ours, recorded with a start time one second off.
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    const stat = await waitFor(() => readProcStat(sleeper.pid!), 5000, 'the sleeper in /proc');
    const wrong = stat.startTime - 100;
    const now = Date.now();
    const run = newRun(def, now, now, { manual: true });
    const runDir = join(h.dir, 'runs', '2026-01-01', run.id);
    mkdirSync(runDir, { recursive: true });
    const ident = { pid: sleeper.pid!, startTime: wrong };
    writeFileSync(
      join(runDir, 'manifest.json'),
      JSON.stringify({
        manifestVersion: 1, backend: 'local', tendVersion: 'test', runId: run.id, kind: 'run', routineId: def.id, jobId: null, attempt: 1,
        command: '/bin/true', args: [], cwd: runDir, envNames: [], outputs: [], revision: null, logCapBytes: 65536, scheduledAt: now, createdAt: now,
        bootId: null, wrapper: ident, routine: ident, startedAt: now - 1000,
      }),
    );
    writeFileSync(join(runDir, 'pid.json'), JSON.stringify({ wrapperPid: sleeper.pid, wrapperStartTime: wrong, pid: sleeper.pid, startTime: wrong }));
    h.store.tx(() => {
      h!.store.runs.insert({ ...run, status: 'RUNNING', runDir, backend: 'local', startedAt: now - 1000 });
      // As a ledger written before a crash: only the directory, the pids come from the manifest.
      h!.store.ledger.record('run', run.id, 'local', { backend: 'local', runId: run.id, runDir, pid: null, startTime: null, wrapperPid: null, wrapperStartTime: null, bootId: null }, now);
    });

    const report = await h.engine.scheduler.pass();
    expect(report.settled).toBe(1);
    const settled = h.run(run.id);
    expect(settled.status).toBe('ERROR');
    expect(settled.reason).toBe(VANISHED_REASON);
    expect(h.store.ledger.all()).toEqual([]);
    // The impostor was neither adopted nor signalled.
    expect(alive(sleeper.pid!)).toBe(true);
    expect(h.eventsOf('run:running')).toEqual([]);
    sleeper.kill('SIGKILL');
  });

  for (const left of ['run.sh only', 'run.sh and manifest']) {
    it(`a job directory a killed launcher left half-written (${left}) is launched, once`, async () => {
      h = new EngineHarness({ start: false });
      const marker = join(h.dir, 'marker');
      const job = h.post({ command: FIX('stamp.sh'), args: [marker, 'half', '0.05', '3'] });
      // The claim of a daemon that was SIGKILLed before it started the wrapper.
      const dead = spawn('true');
      await new Promise((r) => dead.on('exit', r));
      const runDir = runDirFor(h.dir, `job-${job.id}`, job.createdAt);
      const now = Date.now();
      h.store.tx(() => {
        h!.store.ledger.claim('job', String(job.id), `pid:${dead.pid}:dead00`, now);
        moveJob(h!.store, job.id, 'claim', { runDir, backend: 'local', fetchedBy: 'tester@host' }, now);
      });
      mkdirSync(runDir, { recursive: true });
      writeFileSync(join(runDir, 'run.sh'), localWrapperScript(runDir, runDir), { mode: 0o755 });
      if (left !== 'run.sh only') writeFileSync(join(runDir, 'manifest.json'), JSON.stringify({ ...jobManifest(runDir, job.id), wrapper: { pid: null, startTime: null }, routine: { pid: null, startTime: null } }));

      h.engine.start();
      await waitFor(() => TERMINAL.has(h!.job(job.id).status), 15_000, 'the job to settle');
      expect(h.job(job.id)).toMatchObject({ status: 'ERROR', exitCode: 3, reason: 'exit 3' });
      expect(lines(marker).filter((l) => l.startsWith('start half '))).toHaveLength(1);
      expect(h.eventsOf('lease:released').map((e) => e.jobId)).toEqual([job.id]);
    });
  }

  it('of two wrappers started for one job directory, exactly one runs the routine', async () => {
    h = new EngineHarness({ start: false });
    const marker = join(h.dir, 'marker');
    const runDir = join(h.dir, 'runs', 'race', 'job-race');
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, 'run.sh'), localWrapperScript(runDir, runDir), { mode: 0o755 });
    const env = { ...process.env, TEND_RUN_DIR: runDir };
    const wrappers = [0, 1].map(() => spawn(jobShell()[0] as string, [...jobShell().slice(1), join(runDir, 'run.sh'), FIX('stamp.sh'), marker, 'race', '0.2', '0'], { env, stdio: 'ignore' }));
    const codes = await Promise.all(wrappers.map((w) => new Promise((r) => w.on('exit', r))));
    expect(codes).toEqual([0, 0]);
    expect(lines(marker).filter((l) => l.startsWith('start race '))).toHaveLength(1);
    expect(readFileSync(join(runDir, 'exit_code'), 'utf8')).toBe('0\n');
    const claim = readFileSync(join(runDir, 'launched'), 'utf8').trim().split(' ');
    expect(wrappers.map((w) => w.pid)).toContain(Number(claim[0]));
    expect(pidRecord(runDir)!.wrapperPid).toBe(Number(claim[0]));
  });
});

function jobManifest(runDir: string, jobId: number) {
  const now = Date.now();
  return {
    manifestVersion: 1, backend: 'local', tendVersion: 'test', runId: `job-${jobId}`, kind: 'job', routineId: null, jobId, attempt: 1, command: FIX('stamp.sh'),
    args: [], cwd: runDir, envNames: [], outputs: [], revision: null, logCapBytes: 65536, scheduledAt: now, createdAt: now, bootId: null, startedAt: null,
  };
}

describe('the spawn helper', () => {
  let h: EngineHarness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  function parentOf(pid: number): number {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }

  /** Our child processes running the spawn helper (node -e …). */
  function helpers(): number[] {
    const out: number[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === process.pid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes("t: 'spawned'")) out.push(Number(name));
      } catch {
        /* gone */
      }
    }
    return out;
  }

  it('jobs launch, settle on their exit nudge and run once, also after the helper was killed', async () => {
    // A timed pass only every minute: settling rests on the exit reports.
    h = new EngineHarness({ intervalMs: 60_000 });
    const marker = join(h.dir, 'marker');
    const run = (k: string) => h!.post({ command: FIX('stamp.sh'), args: [marker, k, '0.05', '0'] });
    const first = run('before');
    await waitFor(() => h!.job(first.id).status === 'COMPLETED', 15_000, 'the first job');
    const [helper] = helpers();
    expect(helper).toBeDefined();
    // Wrappers are the helper's children, not this process's.
    const hang = h.post({ command: SHARED_FIX('hang.sh') });
    const running = await waitFor(() => (h!.job(hang.id).status === 'RUNNING' ? h!.job(hang.id) : null), 15_000, 'the hanging job');
    expect(parentOf(pidRecord(running.runDir!)!.wrapperPid)).toBe(helper);
    await h.engine.cancelJob(hang.id);
    process.kill(helper!, 'SIGKILL');
    await waitFor(() => !alive(helper!), 5000, 'the helper to die');
    const after = [run('after-1'), run('after-2'), run('after-3')];
    await waitFor(() => after.every((j) => h!.job(j.id).status === 'COMPLETED'), 15_000, 'the jobs after the helper died');
    for (const k of ['before', 'after-1', 'after-2', 'after-3']) expect(lines(marker).filter((l) => l.startsWith(`start ${k} `)), k).toHaveLength(1);
  });

  it('with the helper off (TEND_SPAWNER=off) the daemon spawns wrappers itself, exits still nudging', async () => {
    h = new EngineHarness({ intervalMs: 60_000, settings: settings({ spawner: false }) });
    const marker = join(h.dir, 'marker');
    const jobs = [1, 2, 3].map((k) => h!.post({ command: FIX('stamp.sh'), args: [marker, String(k), '0.05', String(k)] }));
    await waitFor(() => jobs.every((j) => h!.job(j.id).status === 'ERROR'), 15_000, 'the jobs to end');
    expect(jobs.map((j) => h!.job(j.id).exitCode)).toEqual([1, 2, 3]);
    // The wrapper is a child of this process, not of a helper.
    const hang = h.post({ command: SHARED_FIX('hang.sh') });
    const running = await waitFor(() => (h!.job(hang.id).status === 'RUNNING' ? h!.job(hang.id) : null), 15_000, 'the hanging job');
    expect(parentOf(pidRecord(running.runDir!)!.wrapperPid)).toBe(process.pid);
    await h.engine.cancelJob(hang.id);
  });
});

describe('the job wrapper under signals', () => {
  let dir: string | null = null;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = null;
  });

  it('signalled over and over while the routine ends, it still publishes a true exit code', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tend-wrapper-signals-'));
    const seen: string[] = [];
    for (let i = 0; i < 30; i++) {
      const runDir = join(dir, `run-${i}`);
      mkdirSync(runDir);
      writeFileSync(join(runDir, 'run.sh'), localWrapperScript(runDir, runDir), { mode: 0o755 });
      // The routine ignores TERM once its shell has set that up, and exits 5.
      const w = spawn(jobShell()[0] as string, [...jobShell().slice(1), join(runDir, 'run.sh'), '/bin/sh', '-c', 'trap "" TERM; sleep 0.03; exit 5'], { stdio: 'ignore', detached: true });
      const exited = new Promise((r) => w.on('exit', r));
      await waitFor(() => existsSync(join(runDir, 'pid.json')), 10_000, 'the routine to start');
      // TERM to the wrapper every millisecond from before the routine ends until the wrapper is gone.
      await delay(10 + (i % 30));
      const barrage = setInterval(() => {
        try {
          process.kill(w.pid!, 'SIGTERM');
        } catch {
          /* gone */
        }
      }, 1);
      await exited;
      clearInterval(barrage);
      seen.push(existsSync(join(runDir, 'exit_code')) ? readFileSync(join(runDir, 'exit_code'), 'utf8').trim() : 'none');
    }
    // 5, or TERM when one was passed on before the routine's shell ignored it; never no sentinel,
    // never the 127 of a second wait for a routine already collected.
    expect(seen.filter((v) => v !== '5' && v !== 'signal:TERM')).toEqual([]);
    expect(seen).toContain('5');
  }, 60_000);
});
