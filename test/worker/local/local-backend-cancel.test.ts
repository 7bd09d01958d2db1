// Stopping local jobs: the whole session goes (grandchildren included), TERM first, KILL after the
// grace period, and the sentinel always says how it ended.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalBackend, type LocalBackend } from '../../../worker/local/index.js';
import { isSameProcessAlive, readProcStat, sessionMembers } from '../../../worker/jobdir/proc.js';
import { procfsTable } from '../../../worker/jobdir/proc-linux.js';
import { suiteTools } from '../../helpers/waiter-tools.js';
import { fixture, makeSpec, settle, tempDir, stopAll } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;
/** Runs whose waiter reported them over (onExit). */
const over: string[] = [];

beforeAll(() => {
  data = tempDir();
  backend = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, onExit: (id) => over.push(id) });
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

function sentinel(runDir: string): string {
  return readFileSync(join(runDir, 'exit_code'), 'utf8');
}

describe('cancel', () => {
  it('stops the routine and its grandchildren, including one in another process group', async () => {
    const spec = makeSpec(data.path, { command: fixture('fork-grandchild.sh') });
    const handle = await backend.submit(spec);
    const gcFile = join(spec.runDir, 'grandchildren');
    const pids = (await waitFor(() => { try { return readFileSync(gcFile, 'utf8').trim(); } catch { return null; } }, 10_000, 'grandchildren'))
      .split(' ')
      .map(Number);
    const procs = [handle['pid'] as number, ...pids].map((pid) => readProcStat(pid)!);
    const os = procs.map((p) => readProcStat(p.pid, procfsTable())!); // sessions as the OS sees them
    expect(os.every((p) => p !== null && p.sid === handle['pid'])).toBe(true);
    expect(new Set(os.map((p) => p.pgid)).size).toBe(2); // one grandchild left the job's group

    await backend.cancel(handle, 5000);

    for (const p of procs) expect(isSameProcessAlive(p.pid, p.startTime), `pid ${p.pid}`).toBe(false);
    expect(sessionMembers(handle['pid'] as number, handle['startTime'] as number)).toEqual([]);
    expect(sentinel(spec.runDir)).toBe('signal:TERM\n');
    expect(await settle(backend, handle)).toMatchObject({ exitCode: null, signal: 'TERM', reason: 'cancelled (stopped by TERM)' });
  });

  it('a routine that ignores TERM is killed once the grace period is over', async () => {
    const spec = makeSpec(data.path, { command: fixture('ignore-term.sh') });
    const handle = await backend.submit(spec);
    await waitFor(() => backend.tailLog(spec.runDir, 'stdout', 100).includes('ignoring TERM'), 10_000, 'the trap to be set');
    const t0 = Date.now();
    await backend.cancel(handle, 400);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    expect(isSameProcessAlive(handle['pid'] as number, handle['startTime'] as number)).toBe(false);
    expect(sentinel(spec.runDir)).toBe('signal:KILL\n');
    expect(await backend.fetch(handle)).toMatchObject({ signal: 'KILL', reason: 'cancelled (stopped by KILL after a 400 ms grace period)' });
  });

  it('the default grace period comes from the backend options', async () => {
    const quick = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, killGraceMs: 200 });
    const spec = makeSpec(data.path, { command: fixture('ignore-term.sh') });
    const handle = await quick.submit(spec);
    await waitFor(() => quick.tailLog(spec.runDir, 'stdout', 100).includes('ignoring TERM'), 10_000, 'the trap to be set');
    await quick.cancel(handle, Number.NaN);
    expect(sentinel(spec.runDir)).toBe('signal:KILL\n');
  });

  it('a job adopted by a fresh backend can be cancelled from its handle alone', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = JSON.parse(JSON.stringify(await backend.submit(spec))) as Record<string, never>;
    const fresh = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools });
    await fresh.cancel(handle, 5000);
    expect(sentinel(spec.runDir)).toBe('signal:TERM\n');
    expect((await fresh.poll([handle]))[0]).toEqual({ state: 'done' });
  });

  it('if the wrapper itself was killed, cancel writes the sentinel', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = await backend.submit(spec);
    const wrapper = handle['wrapperPid'] as number;
    process.kill(wrapper, 'SIGKILL');
    await waitFor(() => !isSameProcessAlive(wrapper, handle['wrapperStartTime'] as number), 5000, 'the wrapper to die');
    expect((await backend.poll([handle]))[0]?.state).toBe('running'); // the routine lives on
    await backend.cancel(handle, 5000);
    expect(isSameProcessAlive(handle['pid'] as number, handle['startTime'] as number)).toBe(false);
    expect(sentinel(spec.runDir)).toBe('signal:TERM\n');
  });

  it('TERM sent to the wrapper is passed on to the routine, which the wrapper then reports', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = await backend.submit(spec);
    await waitFor(() => backend.tailLog(spec.runDir, 'stdout', 100).includes('hanging'), 10_000, 'the routine to start');
    process.kill(handle['wrapperPid'] as number, 'SIGTERM');
    expect(await settle(backend, handle)).toMatchObject({ exitCode: null, signal: 'TERM', reason: null });
  });

  it('cancelling a job that already ended changes nothing', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit3.sh') });
    const handle = await backend.submit(spec);
    const before = await settle(backend, handle);
    await backend.cancel(handle, 1000);
    expect(sentinel(spec.runDir)).toBe('3\n');
    expect(await backend.fetch(handle)).toEqual(before);
  });

  it('cancelling right after submit still stops the job', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const handle = await backend.submit(spec);
    await backend.cancel(handle, 5000);
    expect(isSameProcessAlive(handle['pid'] as number, handle['startTime'] as number)).toBe(false);
    expect(sentinel(spec.runDir)).toMatch(/^signal:(TERM|KILL)\n$/);
  });
});

describe('what a routine leaves behind', () => {
  /** The pid a routine wrote to `left` in its run dir, and its start time (null: gone already). */
  async function leftover(runDir: string): Promise<{ pid: number; startTime: number | null }> {
    const pid = Number(await waitFor(() => { try { return readFileSync(join(runDir, 'left'), 'utf8').trim() || null; } catch { return null; } }, 10_000, 'the leftover pid'));
    return { pid, startTime: readProcStat(pid)?.startTime ?? null };
  }
  const gone = (p: { pid: number; startTime: number | null }) => p.startTime === null || !isSameProcessAlive(p.pid, p.startTime);

  it('a process the routine left running in its group is stopped once the routine ends', async () => {
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'sleep 3600 & echo $! > "$TEND_RUN_DIR/left"; exit 0'] });
    const handle = await backend.submit(spec);
    const left = await leftover(spec.runDir);
    expect(await settle(backend, handle)).toMatchObject({ exitCode: 0, reason: null });
    await waitFor(() => gone(left), 10_000, `leftover pid ${left.pid} to be stopped`);
  });

  it('one that ignores TERM is killed after the grace period', async () => {
    // (It has ignored TERM since before the routine ends: the subshell sets the trap, then execs sleep.)
    const quick = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, killGraceMs: 300 });
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', `(trap '' TERM; exec sleep 3600) & while [ "$(ps -o comm= -p $!)" != sleep ]; do sleep 0.01; done; echo $! > "$TEND_RUN_DIR/left"; exit 0`] });
    const handle = await quick.submit(spec);
    const left = await leftover(spec.runDir);
    expect(await settle(quick, handle)).toMatchObject({ exitCode: 0 });
    await waitFor(() => gone(left), 10_000, `leftover pid ${left.pid} to be killed`);
  });

  it('one that made a session of its own left the job on purpose, and runs on', async () => {
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'setsid sleep 3600 < /dev/null > /dev/null 2>&1 & while [ "$(ps -o sid= -p $! | tr -d " ")" != "$!" ]; do sleep 0.01; done; echo $! > "$TEND_RUN_DIR/left"; exit 0'] });
    const handle = await backend.submit(spec);
    const left = await leftover(spec.runDir);
    try {
      expect(await settle(backend, handle)).toMatchObject({ exitCode: 0 });
      // The waiter has stopped what was in the routine's group by the time it reports the job over
      // (it exits, or a batch waiter goes back to waiting).
      await waitFor(() => over.includes(spec.runId), 10_000, 'the waiter to report the job over');
      expect(gone(left)).toBe(false);
    } finally {
      process.kill(left.pid, 'SIGKILL');
    }
  });
});
