// The waiter's economy and the poller-kept log cap: a job is two processes (waiter + routine),
// its streams go straight to files, and whoever polls rotates them without losing order.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalBackend, type LocalBackend } from '../../../worker/local/index.js';
import { capLogs, droppedNote, followLog } from '../../../worker/jobdir/logs.js';
import { readRotation } from '../../../worker/jobdir/logcap.js';
import { procfsTable } from '../../../worker/jobdir/proc-linux.js';
import { fixture, makeSpec, settle, tempDir, stopAll } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;

beforeAll(() => {
  data = tempDir();
  backend = createLocalBackend({ dataDir: data.path, tendVersion: 't' });
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

const lineNo = (l: string) => Number(l.slice(5));

describe('the waiter', () => {
  it('a job is two processes: the waiter and the routine, nothing between them and the logs', async () => {
    const spec = makeSpec(data.path, { command: 'sleep', args: ['60'] });
    const handle = await backend.submit(spec);
    try {
      const wrapperPid = handle['wrapperPid'] as number;
      const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
      await waitFor(() => cmdline(handle['pid'] as number) === 'sleep', 10_000, 'the routine to exec');
      const all = procfsTable().all();
      const children = all.filter((p) => p.ppid === wrapperPid).map((p) => p.pid);
      expect(children).toEqual([handle['pid']]);
      expect(all.filter((p) => p.ppid === handle['pid'])).toEqual([]);
      expect(all.filter((p) => p.sid === wrapperPid).map((p) => p.pid)).toEqual([wrapperPid]);
      // The routine's stdout is the log file itself.
      const { readlinkSync } = await import('node:fs');
      expect(readlinkSync(`/proc/${handle['pid'] as number}/fd/1`)).toBe(join(spec.runDir, 'stdout.log'));
      expect(readlinkSync(`/proc/${handle['pid'] as number}/fd/2`)).toBe(join(spec.runDir, 'stderr.log'));
    } finally {
      await backend.cancel(handle, 1000);
    }
  });
});

describe('without a setsid program (macOS)', () => {
  // Both backends' jobs end by themselves: nothing of them is left to stop.
  it.each([
    ['its run.sh', 0],
    ['a batch waiter', 8],
  ])("perl's POSIX::setsid makes the routine the leader of its own session (the waiter: %s)", async (_, batchWaiters) => {
    const perl = createLocalBackend({ dataDir: data.path, tendVersion: 't', tools: { perlSetsid: true }, batchWaiters });
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', 'echo "$$ $(ps -o sid= -p $$)"; exit 4'] });
    const handle = await perl.submit(spec);
    const wrapper = handle['wrapperPid'] as number;
    // A batch waiter is perl itself (it calls setsid(2)); run.sh execs perl -MPOSIX for it.
    const script = batchWaiters === 0 ? join(spec.runDir, 'run.sh') : readFileSync(`/proc/${wrapper}/cmdline`, 'utf8').split('\0').find((a) => a.endsWith('.pl'))!;
    expect(readFileSync(script, 'utf8')).toContain('POSIX::setsid');
    expect(await settle(perl, handle)).toMatchObject({ exitCode: 4 });
    const pid = handle['pid'] as number;
    expect(perl.tailLog(spec.runDir, 'stdout', 100).replace(/ +/g, ' ')).toBe(`${pid} ${pid}\n`);
    const missing = makeSpec(data.path, { command: '/nonexistent/program' });
    // perl -e's die (run.sh) exits 2; the batch waiter's failed exec, 127 as a shell's.
    expect(await settle(perl, await perl.submit(missing))).toMatchObject({ exitCode: batchWaiters === 0 ? 2 : 127 });
    expect(perl.tailLog(missing.runDir, 'stderr', 200)).toContain('/nonexistent/program');
  });
});

describe('the log cap, kept by pollers', () => {
  // Where the file system cannot cut the front of a file, a write that lands between the rotator's
  // last look at the size and its truncate is lost (copy-truncate's one window, logcap.ts; the cut
  // itself: log-cut.test.ts): under a flood, order and the newest output hold either way.
  it('rotating while the routine floods keeps the newest output, in order', async () => {
    const cap = 16 * 1024;
    const lines = 200_000;
    const tail = 100;
    const mark = join(data.path, 'flood.mark');
    const release = join(data.path, 'flood.release');
    const spec = makeSpec(data.path, { command: fixture('flood-pause.sh'), args: [String(lines), mark, release, String(tail), '4'], logCapBytes: cap });
    const handle = await backend.submit(spec);
    // A poller far more eager than the daemon's pass: a rotation on nearly every write (and at
    // least one per burst: the routine waits for it). Under copy-truncate, bytes written in the two
    // system calls between a rotation's last look and its truncate may be lost (logcap.ts), so
    // what follows is checked for order only.
    await waitFor(() => {
      capLogs(spec.runDir);
      return existsSync(mark);
    }, 60_000, 'the flood to be written', 1);
    expect(readRotation(spec.runDir, 'stdout')?.gen ?? 0).toBeGreaterThan(2);
    // What the routine writes once no rotation runs beside it is all kept, after the rest.
    writeFileSync(release, '');
    await waitFor(async () => (await backend.poll([handle]))[0]?.state === 'done', 60_000, 'the routine to end');
    expect(await backend.fetch(handle)).toMatchObject({ exitCode: 0 });
    capLogs(spec.runDir);
    const kept = backend.tailLog(spec.runDir, 'stdout', cap).split('\n').filter((l) => l !== '');
    expect(kept.at(-1)).toBe('END');
    const numbered = kept.slice(1, -1);
    expect(numbered.slice(-tail)).toEqual(Array.from({ length: tail }, (_, k) => `line ${String(lines + k + 1).padStart(8, '0')}`));
    for (let i = 1; i < numbered.length; i++) expect(lineNo(numbered[i] as string)).toBeGreaterThan(lineNo(numbered[i - 1] as string));
    expect(readdirSync(spec.runDir).filter((n) => n.includes('tmp') || n.endsWith('.lock'))).toEqual([]);
  });

  it('a follower that fell behind by more than the cap is told how many bytes it missed', async () => {
    const release = join(data.path, 'behind.release');
    const script = `seq -f 'line %08g' 1 200; while [ ! -e "$1" ]; do sleep 0.01; done; seq -f 'line %08g' 201 20200; echo END`;
    const spec = makeSpec(data.path, { command: '/bin/sh', args: ['-c', script, 'sh', release], logCapBytes: 8192 });
    const handle = await backend.submit(spec);
    await waitFor(() => backend.tailLog(spec.runDir, 'stdout', 100).includes('line 00000200'), 10_000, 'the first 200 lines');
    const follower = followLog(spec.runDir, 'stdout', { intervalMs: 10, tailBytes: 1 << 20 });
    const first = await follower.next();
    expect(first.value).toBe(Array.from({ length: 200 }, (_, k) => `line ${String(k + 1).padStart(8, '0')}\n`).join(''));
    // While the follower is not looking (and nothing polls), the rest is written; then one
    // rotation drops most of it.
    writeFileSync(release, '');
    await waitFor(() => existsSync(join(spec.runDir, 'exit_code')), 10_000, 'the job to end');
    capLogs(spec.runDir);
    let rest = '';
    for (let r = await follower.next(); !r.done; r = await follower.next()) rest += r.value;
    const written = 20_200 * 14 + 4;
    const rec = readRotation(spec.runDir, 'stdout')!;
    expect(rec.end + readFileSync(join(spec.runDir, 'stdout.log')).length).toBe(written);
    expect(rest.startsWith(droppedNote(rec.dropped - 200 * 14))).toBe(true);
    expect(rest.endsWith('line 00020200\nEND\n')).toBe(true);
    expect(await settle(backend, handle)).toMatchObject({ exitCode: 0 });
  });
});
