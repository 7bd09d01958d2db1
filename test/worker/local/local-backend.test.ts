// The local backend with real processes and real job directories: outcomes, the job directory
// protocol, settling from the handle alone, pid reuse, outputs, health.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Handle } from '../../../main/engine/backend.js';
import { createLocalBackend, readHeartbeat, readManifest, VANISHED_REASON, type LocalBackend } from '../../../worker/local/index.js';
import { readProcStat, currentBootId, startTicksToMs } from '../../../worker/jobdir/proc.js';
import { procfsTable } from '../../../worker/jobdir/proc-linux.js';

/** What the OS says of a process (session, group), whichever provider the backend uses. */
const osStat = (pid: number) => readProcStat(pid, procfsTable());
import { parseSentinel, readPidRecord, readSentinel } from '../../../worker/jobdir/jobdir.js';
import { batchWaiterComm, suiteTools } from '../../helpers/waiter-tools.js';
import { fixture, makeSpec, settle, tempDir, stopAll } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;
const exited: string[] = [];

beforeAll(() => {
  data = tempDir();
  backend = createLocalBackend({ dataDir: data.path, tendVersion: '0.1.0-test', tools: suiteTools, onExit: (id) => exited.push(id) });
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

describe('outcomes', () => {
  it('a routine that exits 0 settles as exit 0 with both streams captured', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit0.sh') });
    const handle = await backend.submit(spec);
    const outcome = await settle(backend, handle);
    expect(outcome).toMatchObject({ exitCode: 0, signal: null, reason: null });
    expect(outcome.startedAt).toBeGreaterThan(Date.now() - 60_000);
    expect(outcome.endedAt).toBeGreaterThanOrEqual(outcome.startedAt ?? 0);
    expect(readFileSync(join(spec.runDir, 'exit_code'), 'utf8')).toBe('0\n');
    expect(backend.tailLog(spec.runDir, 'stdout', 1000)).toBe('hello from exit0\n');
    expect(backend.tailLog(spec.runDir, 'stderr', 1000)).toBe('a warning from exit0\n');
  });

  it('a routine that exits 3 settles as exit 3', async () => {
    const handle = await backend.submit(makeSpec(data.path, { command: fixture('exit3.sh') }));
    expect(await settle(backend, handle)).toMatchObject({ exitCode: 3, signal: null, reason: null });
  });

  it('a routine killed by SEGV settles as signal SEGV, one killed by KILL as signal KILL', async () => {
    const segv = await backend.submit(makeSpec(data.path, { command: fixture('crash.sh'), args: ['SEGV'] }));
    const kill = await backend.submit(makeSpec(data.path, { command: fixture('crash.sh'), args: ['KILL'] }));
    expect(await settle(backend, segv)).toMatchObject({ exitCode: null, signal: 'SEGV', reason: null });
    expect(await settle(backend, kill)).toMatchObject({ exitCode: null, signal: 'KILL', reason: null });
  });

  it('a command that does not exist is an ordinary exit 127', async () => {
    const spec = makeSpec(data.path, { command: '/nonexistent/tend-no-such-command' });
    const outcome = await settle(backend, await backend.submit(spec));
    expect(outcome).toMatchObject({ exitCode: 127, signal: null, reason: null });
    expect(backend.tailLog(spec.runDir, 'stderr', 1000)).toMatch(/tend-no-such-command/);
  });

  it('a missing working directory is an error outcome that says so', async () => {
    const cwd = join(data.path, 'no-such-dir');
    const outcome = await settle(backend, await backend.submit(makeSpec(data.path, { command: fixture('exit0.sh'), cwd })));
    expect(outcome.exitCode).toBeNull();
    expect(outcome.reason).toBe(`working directory does not exist: ${cwd}`);
  });

  it('onExit nudges the launcher when the wrapper it started exits', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit0.sh') });
    await backend.submit(spec);
    await waitFor(() => exited.includes(spec.runId), 10_000, 'onExit');
    expect(existsSync(join(spec.runDir, 'exit_code'))).toBe(true);
  });

  it('a job is launched once per run dir: a second submit of the same run adopts the first', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit0.sh') });
    const first = await backend.submit(spec);
    await settle(backend, first);
    // The sentinel is written just before the waiter exits: its exit is reported a moment later.
    await waitFor(() => exited.includes(spec.runId), 10_000, 'the waiter to exit');
    const again = await backend.submit(spec);
    expect(again).toMatchObject({ runDir: first['runDir'], pid: first['pid'], startTime: first['startTime'] });
    expect(exited.filter((id) => id === spec.runId)).toHaveLength(1);
  });
});

describe('the job directory', () => {
  it('the manifest records masked args, env names without values, pids and start times', async () => {
    const spec = makeSpec(data.path, {
      command: fixture('print-env.sh'),
      args: ['SECRET_TOKEN', '--password=hunter2'],
      maskedArgs: ['SECRET_TOKEN', '--password=***'],
      env: { SECRET_TOKEN: 'tok-123456', PLAIN: 'x' },
      jobId: null,
      attempt: 2,
      outputs: ['out/*.csv'],
    });
    const handle = await backend.submit(spec);
    await settle(backend, handle);
    const raw = readFileSync(join(spec.runDir, 'manifest.json'), 'utf8');
    expect(raw).not.toContain('hunter2');
    expect(raw).not.toContain('tok-123456');
    for (const f of readdirSync(spec.runDir).filter((n) => !n.endsWith('.log'))) {
      expect(readFileSync(join(spec.runDir, f), 'utf8'), f).not.toContain('hunter2');
    }
    const m = readManifest(spec.runDir);
    expect(m).toMatchObject({
      backend: 'local',
      tendVersion: '0.1.0-test',
      runId: spec.runId,
      routineId: spec.routineId,
      attempt: 2,
      command: spec.command,
      args: ['SECRET_TOKEN', '--password=***'],
      cwd: spec.runDir,
      envNames: ['PLAIN', 'SECRET_TOKEN'],
      outputs: ['out/*.csv'],
      bootId: currentBootId(),
    });
    expect(m?.wrapper.pid).toBe(handle['wrapperPid']);
    expect(m?.routine.pid).toBe(handle['pid']);
    expect(m?.routine.startTime).toBe(handle['startTime']);
    expect(typeof m?.routine.startTime).toBe('number');
    expect(m?.startedAt).toBeGreaterThan(0);
  });

  it("without batch waiters, every job's run.sh is one shared waiter (a hard link); each routine runs in its own working directory, without the waiter's variable", async () => {
    const work = join(data.path, 'work-shared');
    mkdirSync(work, { recursive: true });
    const cmd = { command: '/bin/sh', args: ['-c', 'pwd; echo "w=${TEND_WAITER_WORKDIR-unset}"'] };
    const specs = [makeSpec(data.path, { ...cmd, maskedArgs: cmd.args }), makeSpec(data.path, { ...cmd, maskedArgs: cmd.args, cwd: work })];
    const unpooled = createLocalBackend({ dataDir: data.path, tendVersion: '0.1.0-test', tools: suiteTools, batchWaiters: 0 });
    for (const spec of specs) expect(await settle(unpooled, await unpooled.submit(spec))).toMatchObject({ exitCode: 0 });
    const [a, b] = specs.map((spec) => statSync(join(spec.runDir, 'run.sh')));
    expect(a!.ino).toBe(b!.ino);
    expect(a!.nlink).toBeGreaterThanOrEqual(3); // the shared copy and these two
    expect(a!.mode & 0o777).toBe(0o700);
    expect(specs.map((spec) => readFileSync(join(spec.runDir, 'stdout.log'), 'utf8'))).toEqual([`${specs[0]!.runDir}\nw=unset\n`, `${work}\nw=unset\n`]);
  });

  it('the manifest is written once, before the launch: the pids and the start are read from pid.json', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit0.sh') });
    const handle = await backend.submit(spec);
    await settle(backend, handle);
    const raw = JSON.parse(readFileSync(join(spec.runDir, 'manifest.json'), 'utf8')) as { wrapper: unknown; routine: unknown; startedAt: unknown };
    expect(raw).toMatchObject({ wrapper: { pid: null, startTime: null }, routine: { pid: null, startTime: null }, startedAt: null });
    const pids = readPidRecord(spec.runDir)!;
    expect(readManifest(spec.runDir)).toMatchObject({ wrapper: { pid: pids.wrapperPid }, routine: { pid: pids.pid, startTime: pids.startTime }, startedAt: startTicksToMs(pids.startTime) });
    expect(readdirSync(spec.runDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('the job sees TEND_* variables and spec.env over the daemon environment', async () => {
    process.env['TEND_TEST_INHERITED'] = 'from-daemon';
    process.env['TEND_TEST_OVERRIDDEN'] = 'from-daemon';
    try {
      const spec = makeSpec(data.path, {
        command: fixture('print-env.sh'),
        args: ['TEND_TEST_INHERITED', 'TEND_TEST_OVERRIDDEN'],
        env: { TEND_TEST_OVERRIDDEN: 'from-spec' },
        attempt: 3,
      });
      await settle(backend, await backend.submit(spec));
      const lines = backend.tailLog(spec.runDir, 'stdout', 10_000).split('\n');
      expect(lines).toContain(`TEND_RUN_ID=${spec.runId}`);
      expect(lines).toContain(`TEND_RUN_DIR=${spec.runDir}`);
      expect(lines).toContain('TEND_ROUTINE=tester@HOST:fixtures');
      expect(lines).toContain('TEND_ATTEMPT=3');
      expect(lines).toContain('TEND_SCHEDULED_AT=2026-01-02T03:04:05.000Z');
      expect(lines).toContain('TEND_TEST_INHERITED=from-daemon');
      expect(lines).toContain('TEND_TEST_OVERRIDDEN=from-spec');
    } finally {
      delete process.env['TEND_TEST_INHERITED'];
      delete process.env['TEND_TEST_OVERRIDDEN'];
    }
  });

  it('a routine PATH without the system directories is what the routine sees, and the wrapper still works', async () => {
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'echo "PATH=$PATH"; exit 4'], env: { PATH: '/opt/tend-nothing/bin' } });
    expect(await settle(backend, await backend.submit(spec))).toMatchObject({ exitCode: 4 });
    expect(backend.tailLog(spec.runDir, 'stdout', 1000)).toBe('PATH=/opt/tend-nothing/bin\n');
  });

  it('a batch job is named job-<id> in TEND_ROUTINE', async () => {
    const spec = makeSpec(data.path, { command: fixture('print-env.sh'), kind: 'job', routineId: null, jobId: 42 });
    await settle(backend, await backend.submit(spec));
    expect(backend.tailLog(spec.runDir, 'stdout', 10_000).split('\n')).toContain('TEND_ROUTINE=job-42');
  });

  it('the routine leads its own session, apart from the wrapper and from this process', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = await backend.submit(spec);
    try {
      await waitFor(() => backend.tailLog(spec.runDir, 'stdout', 100).includes('hanging'), 10_000, 'the routine to start');
      const routine = osStat(handle['pid'] as number);
      const wrapper = osStat(handle['wrapperPid'] as number);
      expect(routine?.sid).toBe(handle['pid']);
      expect(routine?.pgid).toBe(handle['pid']);
      expect(wrapper?.sid).toBe(handle['wrapperPid']);
      expect(readProcStat(handle['pid'] as number)?.startTime).toBe(handle['startTime']);
      expect(osStat(process.pid)?.sid).not.toBe(wrapper?.sid);
      expect(await backend.poll([handle])).toEqual([{ state: 'running', startedAt: expect.any(Number), heartbeatAt: null }]);
    } finally {
      await backend.cancel(handle, 1000);
    }
  });

  it.skipIf(process.platform !== 'linux')("a batch job's waiter is perl where installed, else the backend's shell (the dash and bash --posix variants give theirs)", async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = await backend.submit(spec);
    try {
      const comm = readFileSync(`/proc/${handle['wrapperPid'] as number}/comm`, 'utf8').trim();
      expect(comm).toBe(batchWaiterComm());
    } finally {
      await backend.cancel(handle, 1000);
    }
  });

  it('the sentinel counts only once its line is whole (the waiter writes it in one write, no rename)', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit3.sh') });
    const handle = await backend.submit(spec);
    await settle(backend, handle);
    expect(readFileSync(join(spec.runDir, 'exit_code'), 'utf8')).toBe('3\n');
    expect(readdirSync(spec.runDir).filter((n) => n.includes('tmp'))).toEqual([]);
    // What a reader may see while the waiter writes: an empty file, or (a waiter killed mid-write)
    // a line without its end. Neither is the job's end.
    const runDir = join(data.path, 'runs', 'fake', 'half-written');
    mkdirSync(runDir, { recursive: true });
    for (const partial of ['', '3', 'signal:TE']) {
      writeFileSync(join(runDir, 'exit_code'), partial);
      expect(readSentinel(runDir), JSON.stringify(partial)).toBeNull();
    }
    writeFileSync(join(runDir, 'exit_code'), 'signal:TERM\n');
    expect(readSentinel(runDir)).toMatchObject({ kind: 'signal', signal: 'TERM' });
  });

  it('parses every sentinel form', () => {
    expect(parseSentinel('0', 5)).toEqual({ kind: 'exit', code: 0, at: 5 });
    expect(parseSentinel('signal:TERM', 5)).toEqual({ kind: 'signal', signal: 'TERM', at: 5 });
    expect(parseSentinel('error:working directory does not exist: /x', 5)).toEqual({ kind: 'error', message: 'working directory does not exist: /x', at: 5 });
    expect(parseSentinel('', 5)).toMatchObject({ kind: 'error' });
  });

  it('readHeartbeat gives the mtime of the heartbeat file the routine touches', async () => {
    const spec = makeSpec(data.path, { command: fixture('heartbeat.sh'), args: ['3'] });
    const handle = await backend.submit(spec);
    try {
      expect(readHeartbeat(join(data.path, 'nowhere'))).toBeNull();
      const beat = await waitFor(() => backend.readHeartbeat(spec.runDir), 10_000, 'a heartbeat');
      expect(beat).toBe(Math.round(statSync(join(spec.runDir, 'heartbeat')).mtimeMs));
      await waitFor(() => backend.tailLog(spec.runDir, 'stdout', 100).includes('silent now'), 10_000, 'silence');
      // silent from now on, yet still running: liveness and heartbeat are separate questions
      expect((await backend.poll([handle]))[0]?.state).toBe('running');
    } finally {
      await backend.cancel(handle, 1000);
    }
  });
});

describe('settling from the handle alone', () => {
  it('a brand-new backend instance settles a job another instance launched', async () => {
    const spec = makeSpec(data.path, { command: fixture('append-marker.sh'), args: [join(data.path, 'adopt.marker'), join(data.path, 'adopt.release'), '7'] });
    const handle = JSON.parse(JSON.stringify(await backend.submit(spec))) as Handle; // as it comes back from the ledger
    const fresh = createLocalBackend({ dataDir: data.path, tendVersion: '0.1.0-test', tools: suiteTools });
    expect((await fresh.poll([handle]))[0]?.state).toBe('running');
    writeFileSync(join(data.path, 'adopt.release'), '');
    expect(await settle(fresh, handle)).toMatchObject({ exitCode: 7, signal: null, reason: null });
    expect(readFileSync(join(data.path, 'adopt.marker'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('a handle rebuilt from the run dir alone polls and fetches like the original', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit3.sh') });
    const original = await backend.submit(spec);
    await settle(backend, original);
    const rebuilt = backend.handleFromRunDir(spec.runDir);
    expect(rebuilt).toEqual(original);
    expect(await backend.fetch(rebuilt!)).toEqual(await backend.fetch(original));
  });

  it('a live pid whose start time differs from the recorded one is not the job: it vanished', async () => {
    const sleeper = spawn('sleep', ['3600'], { stdio: 'ignore' });
    try {
      const pid = sleeper.pid!;
      const real = await waitFor(() => readProcStat(pid), 5000, 'the sleeper');
      const runDir = join(data.path, 'runs', 'fake', 'reused-pid');
      mkdirSync(runDir, { recursive: true });
      writeFileSync(join(runDir, 'manifest.json'), JSON.stringify({ backend: 'local', runId: 'reused-pid', outputs: [], cwd: runDir, routine: { pid, startTime: real.startTime - 1 }, wrapper: { pid: process.pid, startTime: 1 } }));
      const handle = { backend: 'local', runId: 'reused-pid', runDir, pid, startTime: real.startTime - 1, wrapperPid: process.pid, wrapperStartTime: 1, bootId: currentBootId() };
      expect(await backend.poll([handle])).toEqual([{ state: 'done' }]);
      expect(await backend.fetch(handle)).toEqual({ exitCode: null, signal: null, reason: VANISHED_REASON, startedAt: expect.any(Number), endedAt: null });
      // the same pid with its true start time is alive
      expect(await backend.poll([{ ...handle, startTime: real.startTime }])).toEqual([{ state: 'running', startedAt: expect.any(Number), heartbeatAt: null }]);
      // …but not if it was recorded in another boot
      expect(await backend.poll([{ ...handle, startTime: real.startTime, bootId: 'another-boot' }])).toEqual([{ state: 'done' }]);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('a handle whose run dir is gone is lost, not guessed', async () => {
    const handle = { backend: 'local', runId: 'gone', runDir: join(data.path, 'runs', 'gone'), pid: 1, startTime: 1, wrapperPid: null, wrapperStartTime: null, bootId: null };
    const [state] = await backend.poll([handle, { nothing: true }]);
    expect(state).toEqual({ state: 'lost', reason: `job directory missing: ${handle.runDir}` });
    expect((await backend.poll([{ nothing: true }]))[0]).toMatchObject({ state: 'lost' });
  });
});

describe('promised outputs', () => {
  it('exit 0 with a promised output missing is not a success, and says which', async () => {
    const cwd = join(data.path, 'outputs-missing');
    mkdirSync(cwd, { recursive: true });
    const spec = makeSpec(data.path, { command: fixture('write-output.sh'), args: ['out/a.csv'], cwd, outputs: ['out/a.csv', 'out/report.pdf'] });
    expect(await settle(backend, await backend.submit(spec))).toMatchObject({ exitCode: 0, reason: 'promised output missing: out/report.pdf' });
  });

  it('paths and globs that match count as delivered', async () => {
    const cwd = join(data.path, 'outputs-present');
    mkdirSync(cwd, { recursive: true });
    const spec = makeSpec(data.path, { command: fixture('write-output.sh'), args: ['out/2026/a.csv', 'summary.txt'], cwd, outputs: ['summary.txt', 'out/*/*.csv', 'out/**/a.csv', '**/*.txt'] });
    expect(await settle(backend, await backend.submit(spec))).toMatchObject({ exitCode: 0, reason: null });
  });

  it('a glob that matches nothing is missing', async () => {
    const cwd = join(data.path, 'outputs-glob');
    mkdirSync(cwd, { recursive: true });
    const spec = makeSpec(data.path, { command: fixture('write-output.sh'), args: ['out/a.csv'], cwd, outputs: ['out/*.parquet'] });
    expect(await settle(backend, await backend.submit(spec))).toMatchObject({ exitCode: 0, reason: 'promised output missing: out/*.parquet' });
  });

  it('outputs are not judged when the routine failed', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit3.sh'), outputs: ['never.txt'] });
    expect(await settle(backend, await backend.submit(spec))).toMatchObject({ exitCode: 3, reason: null });
  });
});

describe('health', () => {
  it('is ok with free disk and a writable runs dir', async () => {
    expect(await backend.health()).toEqual({ ok: true, reason: null });
  });

  it('looks at the runs dir without writing in it (a probe file raced the removal of the data dir after its engine stopped)', async () => {
    const dir = join(data.path, 'health-quiet');
    await createLocalBackend({ dataDir: dir, tendVersion: 't', tools: suiteTools }).health();
    const runs = join(dir, 'runs');
    const seen: string[] = [];
    const watcher = watch(runs, (_, name) => seen.push(String(name)));
    try {
      expect(await createLocalBackend({ dataDir: dir, tendVersion: 't', tools: suiteTools }).health()).toEqual({ ok: true, reason: null });
      // Events come in order: once this one is heard, any of the probe's would have been.
      writeFileSync(join(runs, 'marker'), '');
      await waitFor(() => seen.includes('marker'), 10_000, 'the marker to be seen');
      expect(seen.filter((n) => n !== 'marker')).toEqual([]);
    } finally {
      watcher.close();
    }
  });

  it('is unhealthy, with the reason, below the free-space floor', async () => {
    const greedy = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, minFreeBytes: Number.MAX_SAFE_INTEGER });
    const h = await greedy.health();
    expect(h.ok).toBe(false);
    expect(h.reason).toMatch(/free in/);
  });

  it('a healthy answer up to 30 s old is given at once while a new probe runs behind it, whose answer serves the next ask', async () => {
    const dir = join(data.path, 'health-stale');
    const b = createLocalBackend({ dataDir: dir, tendVersion: 't', tools: suiteTools });
    expect(await b.health()).toEqual({ ok: true, reason: null });
    // The runs dir becomes a file: a probe now says so.
    rmSync(join(dir, 'runs'), { recursive: true, force: true });
    writeFileSync(join(dir, 'runs'), '');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 5_000 });
    try {
      expect(await b.health()).toEqual({ ok: true, reason: null });
      const h = await waitFor(async () => {
        const seen = await b.health();
        return seen.ok ? null : seen;
      }, 10_000, 'the probe behind it to be heard');
      expect(h).toMatchObject({ ok: false, reason: expect.stringMatching(/cannot create/) });
    } finally {
      vi.useRealTimers();
    }
  });

  it('an answer older than that is not given: the probe is waited for', async () => {
    const dir = join(data.path, 'health-old');
    const b = createLocalBackend({ dataDir: dir, tendVersion: 't', tools: suiteTools });
    expect(await b.health()).toEqual({ ok: true, reason: null });
    rmSync(join(dir, 'runs'), { recursive: true, force: true });
    writeFileSync(join(dir, 'runs'), '');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 31_000 });
    try {
      expect(await b.health()).toMatchObject({ ok: false, reason: expect.stringMatching(/cannot create/) });
    } finally {
      vi.useRealTimers();
    }
  });

  it('is unhealthy when the runs dir cannot be created', async () => {
    const file = join(data.path, 'a-file');
    writeFileSync(file, '');
    const h = await createLocalBackend({ dataDir: file, tendVersion: 't' }).health();
    expect(h).toMatchObject({ ok: false, reason: expect.stringMatching(/cannot create/) });
  });
});
