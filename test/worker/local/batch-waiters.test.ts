// Batch waiters (issue 14, per job): the local backend keeps waiters between batch jobs, and a
// job is a message to one — a fork and the routine's exec, not a shell's start. Real processes,
// real job directories. What the daemon's death does to them is in local-backend-survival.test.ts.
import { readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Handle } from '../../../main/engine/backend.js';
import { createLocalBackend, readManifest, readPidRecord, type LocalBackend } from '../../../worker/local/index.js';
import { readProcStat } from '../../../worker/jobdir/proc.js';
import { BatchWaiters } from '../../../worker/local/batch-waiters.js';
import { findTool, jobShell } from '../../../worker/local/tools.js';
import { procfsTable } from '../../../worker/jobdir/proc-linux.js';
import { batchWaiterKind, suiteTools } from '../../helpers/waiter-tools.js';
import { fixture, makeSpec, settle, stopAll, tempDir } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;
const over: string[] = [];

beforeAll(() => {
  data = tempDir('tend-batch-waiters-');
  backend = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, onExit: (id) => over.push(id) });
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return []; // gone
  }
};
/** A batch waiter runs the script kept in runs/.waiters; an ordinary one its job's run.sh. */
const isBatchWaiter = (pid: number) => cmdline(pid).some((a) => a.startsWith(join(data.path, 'runs', '.waiters')));

/** Read system calls of a process and of the children it reaped (Linux: /proc/PID/io). */
const readsOf = (pid: number) => Number(/^syscr: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
const readableIo = () => {
  try {
    return Number.isFinite(readsOf(process.pid));
  } catch {
    return false;
  }
};

/** Run to the end, and until its waiter has reported it over (it may then take the next). */
async function runToEnd(b: LocalBackend, handle: Handle) {
  const outcome = await settle(b, handle);
  await waitFor(() => over.includes(handle['runId'] as string), 10_000, 'the waiter to report the job over');
  return outcome;
}

describe('batch waiters', () => {
  it('jobs run one after another on the same waiter, each routine the leader of its own session, each with its own files', async () => {
    const print = { command: '/bin/sh', args: ['-c', 'echo "$TEND_RUN_ID in $(pwd)"; echo err >&2; exit 4'] };
    const first = makeSpec(data.path, print);
    const h1 = await backend.submit(first);
    expect(isBatchWaiter(h1['wrapperPid'] as number)).toBe(true);
    expect(await runToEnd(backend, h1)).toMatchObject({ exitCode: 4 });

    const hang = makeSpec(data.path, { command: fixture('hang.sh'), cwd: data.path });
    const h2 = await backend.submit(hang);
    expect(h2['wrapperPid']).toBe(h1['wrapperPid']);
    await waitFor(() => backend.tailLog(hang.runDir, 'stdout', 100).includes('hanging'), 10_000, 'the routine to start');
    expect(readProcStat(h2['pid'] as number, procfsTable())).toMatchObject({ sid: h2['pid'], pgid: h2['pid'], ppid: h2['wrapperPid'] });
    expect(readProcStat(h2['wrapperPid'] as number, procfsTable())?.sid).toBe(h2['wrapperPid']);
    await backend.cancel(h2, 1000);
    expect(readFileSync(join(hang.runDir, 'exit_code'), 'utf8')).toBe('signal:TERM\n');
    await waitFor(() => over.includes(hang.runId), 10_000, 'the waiter to report the cancelled job over');

    const third = makeSpec(data.path, print);
    const h3 = await backend.submit(third);
    expect(h3['wrapperPid']).toBe(h1['wrapperPid']);
    expect(await runToEnd(backend, h3)).toMatchObject({ exitCode: 4 });
    for (const spec of [first, third]) {
      expect(backend.tailLog(spec.runDir, 'stdout', 1000)).toBe(`${spec.runId} in ${spec.runDir}\n`);
      expect(backend.tailLog(spec.runDir, 'stderr', 1000)).toBe('err\n');
      // No run.sh: the waiter was running already. Everything the waiter wrote is owner-only.
      expect(readdirSync(spec.runDir).sort()).toEqual(['exit_code', 'launched', 'manifest.json', 'pid.json', 'stderr.log', 'stdout.log']);
      for (const f of readdirSync(spec.runDir)) expect(statSync(join(spec.runDir, f)).mode & 0o077).toBe(0);
      // The waiter wrote the manifest (a new directory's), as submit would have: masked args, pids from pid.json.
      const pids = readPidRecord(spec.runDir)!;
      expect(readManifest(spec.runDir)).toMatchObject({ backend: 'local', runId: spec.runId, command: '/bin/sh', args: print.args, cwd: spec.runDir, wrapper: { pid: pids.wrapperPid }, routine: { pid: pids.pid } });
    }
  });

  it("arguments and environment values reach the routine as they are; the daemon's environment is the one of now, not of the waiter's start", async () => {
    process.env['TEND_TEST_GONE'] = 'there at the start';
    const fresh = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, onExit: (id) => over.push(id) });
    const h0 = await fresh.submit(makeSpec(data.path, { command: '/bin/true' }));
    await runToEnd(fresh, h0);
    delete process.env['TEND_TEST_GONE'];
    process.env['TEND_TEST_LATER'] = 'added since';
    const odd = `it's "q" $HOME \`x\` \\ back\nslash\n`;
    try {
      const spec = makeSpec(data.path, {
        command: '/bin/sh',
        args: ['-c', 'printf "[%s]" "$1" "$ODD" "${TEND_TEST_LATER-unset}" "${TEND_TEST_GONE-unset}"', 'zero', odd],
        env: { ODD: odd },
      });
      const handle = await fresh.submit(spec);
      expect(handle['wrapperPid']).toBe(h0['wrapperPid']);
      expect(await runToEnd(fresh, handle)).toMatchObject({ exitCode: 0 });
      expect(fresh.tailLog(spec.runDir, 'stdout', 1000)).toBe(`[${odd}][${odd}][added since][unset]`);
    } finally {
      delete process.env['TEND_TEST_LATER'];
    }
  });

  // bash takes commands from a pipe or socket a byte at a time (POSIX asks a shell not to read ahead of them): there is nothing to count.
  const shell = realpathSync(jobShell(suiteTools.shell)[0] ?? findTool('sh') ?? '/bin/sh');
  it.skipIf(/bash/.test(shell) || !readableIo())("a job reaches its waiter's shell in a few reads, not a read per byte: the shell parses it from its input in blocks (this shell: dash)", async () => {
    const first = await backend.submit(makeSpec(data.path, { command: '/bin/true' }));
    await runToEnd(backend, first);
    const waiter = first['wrapperPid'] as number;
    const before = readsOf(waiter);
    const jobs = 4;
    for (let i = 0; i < jobs; i++) {
      // A message of over 2 kB: the `read` builtin would take over 2,000 system calls for it.
      const h = await backend.submit(makeSpec(data.path, { command: '/bin/true', env: { PADDING: 'x'.repeat(2000) } }));
      expect(h['wrapperPid']).toBe(waiter);
      expect(await runToEnd(backend, h)).toMatchObject({ exitCode: 0 });
    }
    // What is left: the routine's start time (a line of /proc/PID/stat, which `read` takes a byte
    // at a time) and the reads of the processes it reaped (setsid's and the routine's loaders).
    expect((readsOf(waiter) - before) / jobs).toBeLessThan(1000);
  });

  it.runIf(batchWaiterKind() === 'sh').each<Record<string, string>>([{ 'TEND.ODD-NAME': 'kept' }, { PPID: '1' }, { SHELLOPTS: 'posix' }])('sh: a variable no shell variable can be, or one the shell keeps to itself, starts that job the ordinary way (through exec, as before): %o', async (env) => {
    const spec = makeSpec(data.path, { command: '/usr/bin/env', env });
    const handle = await backend.submit(spec);
    expect(isBatchWaiter(handle['wrapperPid'] as number)).toBe(false);
    expect(await settle(backend, handle)).toMatchObject({ exitCode: 0 });
    expect(readdirSync(spec.runDir)).toContain('run.sh');
  });

  it.runIf(batchWaiterKind() === 'perl').each<Record<string, string>>([{ 'TEND.ODD-NAME': 'kept' }, { PPID: '1' }, { SHELLOPTS: 'posix' }])('perl: any variable reaches the routine through the waiter, even one no shell variable can be: %o', async (env) => {
    const spec = makeSpec(data.path, { command: '/usr/bin/env', env });
    const handle = await backend.submit(spec);
    expect(isBatchWaiter(handle['wrapperPid'] as number)).toBe(true);
    expect(await runToEnd(backend, handle)).toMatchObject({ exitCode: 0 });
    const [name, value] = Object.entries(env)[0]!;
    expect(backend.tailLog(spec.runDir, 'stdout', 100_000).split('\n')).toContain(`${name}=${value}`);
    expect(readdirSync(spec.runDir)).not.toContain('run.sh');
  });

  it.runIf(batchWaiterKind() === 'perl')("perl: the daemon's PERL5OPT does not reach the waiter's perl, and does reach the routine", async () => {
    process.env['PERL5OPT'] = '-MNo::Such::Module';
    try {
      const fresh = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, onExit: (id) => over.push(id) });
      const spec = makeSpec(data.path, { command: '/usr/bin/env' });
      const handle = await fresh.submit(spec);
      expect(isBatchWaiter(handle['wrapperPid'] as number)).toBe(true);
      expect(await runToEnd(fresh, handle)).toMatchObject({ exitCode: 0 });
      expect(fresh.tailLog(spec.runDir, 'stdout', 100_000).split('\n')).toContain('PERL5OPT=-MNo::Such::Module');
    } finally {
      delete process.env['PERL5OPT'];
    }
  });

  it.runIf(batchWaiterKind() === 'perl')('perl: an exit code above 128 is that exit code, not taken for a signal as a shell takes it; a death by signal is named', async () => {
    const exits = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'exit 130'] });
    const h1 = await backend.submit(exits);
    expect(isBatchWaiter(h1['wrapperPid'] as number)).toBe(true);
    expect(await runToEnd(backend, h1)).toMatchObject({ exitCode: 130, signal: null });
    expect(readFileSync(join(exits.runDir, 'exit_code'), 'utf8')).toBe('130\n');
    const killed = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'kill -USR1 $$'] });
    const h2 = await backend.submit(killed);
    expect(await runToEnd(backend, h2)).toMatchObject({ exitCode: null, signal: 'USR1' });
    expect(readFileSync(join(killed.runDir, 'exit_code'), 'utf8')).toBe('signal:USR1\n');
  });

  it.runIf(batchWaiterKind() === 'perl')('a perl that cannot run the waiter (no POSIX module) costs one job its batch waiter: that job starts the ordinary way, the next ones on sh waiters', async () => {
    const broken = join(data.path, 'perl-without-posix');
    writeFileSync(broken, '#!/bin/sh\necho "Can\'t locate POSIX.pm in @INC" >&2\nexit 2\n', { mode: 0o700 });
    const b = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: { ...suiteTools, perl: broken }, onExit: (id) => over.push(id) });
    const first = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'exit 5'] });
    const h1 = await b.submit(first);
    expect(isBatchWaiter(h1['wrapperPid'] as number)).toBe(false);
    expect(await settle(b, h1)).toMatchObject({ exitCode: 5 });
    expect(readdirSync(first.runDir)).toContain('run.sh');
    const second = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'exit 6'] });
    const h2 = await b.submit(second);
    expect(isBatchWaiter(h2['wrapperPid'] as number)).toBe(true);
    expect(cmdline(h2['wrapperPid'] as number)).toContain('-s');
    expect(await runToEnd(b, h2)).toMatchObject({ exitCode: 6 });
  });

  it('there are no more waiters than the backend is given: a job beyond them starts the ordinary way', async () => {
    const one = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: suiteTools, batchWaiters: 1 });
    const a = makeSpec(data.path, { command: fixture('hang.sh') });
    const b = makeSpec(data.path, { command: fixture('hang.sh') });
    const [ha, hb] = await Promise.all([one.submit(a), one.submit(b)]);
    try {
      expect([ha, hb].map((h) => isBatchWaiter(h['wrapperPid'] as number)).sort()).toEqual([false, true]);
    } finally {
      await Promise.all([one.cancel(ha, 1000), one.cancel(hb, 1000)]);
    }
  });
});

describe('a batch waiter that does not answer', () => {
  it('is let go after the answer timeout: the job is told gone (and starts the ordinary way), the waiter leaves at end of file', async () => {
    const over: string[] = [];
    const pool = new BatchWaiters({ dataDir: data.path, tools: suiteTools, max: 1, onOver: (id) => over.push(id), answerTimeoutMs: 300 });
    // Reads jobs and never answers (stuck, say, on a file system that hangs).
    const mute = '#!/bin/sh\nwhile IFS= read -r line; do :; done\n';
    const waiter = await pool.take({ kind: 'sh', text: mute });
    expect(waiter).not.toBeNull();
    expect(await pool.run(waiter!, 'mute-run', 'a\nb\nc\nd\n\n')).toBe('gone');
    await waitFor(() => cmdline(waiter!.pid).length === 0 || readProcStat(waiter!.pid, procfsTable())?.state === 'Z', 10_000, 'the mute waiter to leave');
    expect(pool.counts()).toMatchObject({ idle: 0, busy: 0, starting: 0 });
    expect(over).toEqual([]);
  });
});
