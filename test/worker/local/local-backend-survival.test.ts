// Jobs outlive the process that launched them: a "daemon" (a separate Node process running the
// compiled backend) submits a job and is killed with SIGKILL; a new backend in this process,
// knowing only the handle from the ledger, settles the job with its true exit code, once.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Handle } from '../../../main/engine/backend.js';
import { createLocalBackend } from '../../../worker/local/index.js';
import { isSameProcessAlive, readProcStat } from '../../../worker/jobdir/proc.js';
import { readPidRecord } from '../../../worker/jobdir/jobdir.js';
import { procfsTable } from '../../../worker/jobdir/proc-linux.js';
import { suiteTools } from '../../helpers/waiter-tools.js';
import { fixture, makeSpec, settle, tempDir, stopAll } from '../../helpers/local-job.js';
import { waitFor } from '../../helpers/wait.js';

const ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
let data: ReturnType<typeof tempDir>;
let daemonScript: string;

/** Compile the backend to plain JS the child process can import (Node 20 cannot run .ts). */
function buildBackend(outDir: string): string {
  const config = join(outDir, 'tsconfig.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.base.json'),
      compilerOptions: { rootDir: ROOT, outDir: join(outDir, 'out'), noCheck: true, types: [], noEmit: false },
      files: [join(ROOT, 'worker/local/index.ts')],
    }),
  );
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], { stdio: 'pipe' });
  writeFileSync(join(outDir, 'out', 'package.json'), '{"type":"module"}\n');
  const script = join(outDir, 'daemon.mjs');
  writeFileSync(
    script,
    `import { createLocalBackend } from ${JSON.stringify(join(outDir, 'out/worker/local/index.js'))};
const [dataDir, specJson, toolsJson] = process.argv.slice(2);
const backend = createLocalBackend({ dataDir, tendVersion: 'daemon', tools: JSON.parse(toolsJson) });
const spec = JSON.parse(specJson);
// An array of specs: submitted together, their handles written as one array.
const handle = Array.isArray(spec) ? await Promise.all(spec.map((s) => backend.submit(s))) : await backend.submit(spec);
process.stdout.write(JSON.stringify(handle) + '\\n'); // the ledger write
setInterval(() => {}, 60_000); // stay up until killed
`,
  );
  return script;
}

/** Start the fake daemon, get the handle it recorded (an array of them for an array of specs). */
async function launchFromDaemon(specJson: string): Promise<{ daemon: ChildProcess; handle: Handle }> {
  const daemon = spawn(process.execPath, [daemonScript, data.path, specJson, JSON.stringify(suiteTools)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: daemon.stdout! });
  const first = await new Promise<string>((res, rej) => {
    lines.once('line', res);
    daemon.once('exit', (code) => rej(new Error(`daemon exited ${code} before recording a handle`)));
  });
  return { daemon, handle: JSON.parse(first) as Handle };
}

beforeAll(() => {
  data = tempDir();
  daemonScript = buildBackend(data.path);
}, 60_000);
afterAll(async () => {
  await stopAll(createLocalBackend({ dataDir: data.path, tendVersion: 'cleanup', tools: suiteTools }), data.path);
  data.remove();
});

describe('a job survives the death of the process that launched it', () => {
  it('is settled by a new backend with its true exit code, exactly once', async () => {
    const marker = join(data.path, 'ran.marker');
    const release = join(data.path, 'release');
    const spec = makeSpec(data.path, { command: fixture('append-marker.sh'), args: [marker, release, '5'] });
    const { daemon, handle } = await launchFromDaemon(JSON.stringify(spec));
    await waitFor(() => { try { return readFileSync(marker, 'utf8').includes('ran'); } catch { return false; } }, 10_000, 'the job to start');

    const died = new Promise((res) => daemon.once('exit', res));
    daemon.kill('SIGKILL');
    await died;

    const restarted = createLocalBackend({ dataDir: data.path, tendVersion: 'restarted', tools: suiteTools });
    expect(isSameProcessAlive(handle['pid'] as number, handle['startTime'] as number)).toBe(true);
    expect((await restarted.poll([handle]))[0]?.state).toBe('running');
    // A restarted daemon that submits the same run again adopts the job its directory records:
    // the same process, no second run (the marker below has one line).
    expect(await restarted.submit(spec)).toMatchObject({ runDir: spec.runDir, pid: handle['pid'], startTime: handle['startTime'] });

    writeFileSync(release, '');
    expect(await settle(restarted, handle)).toMatchObject({ exitCode: 5, signal: null, reason: null });
    expect(await restarted.fetch(handle)).toMatchObject({ exitCode: 5 }); // settling again is stable
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toEqual([`ran ${spec.runId}`]);
    expect(readFileSync(join(spec.runDir, 'exit_code'), 'utf8')).toBe('5\n');
  });

  it('a job whose processes all died with no exit code is settled as vanished', async () => {
    const spec = makeSpec(data.path, { command: fixture('hang.sh') });
    const { daemon, handle } = await launchFromDaemon(JSON.stringify(spec));
    daemon.kill('SIGKILL');
    await waitFor(() => readProcStat(handle['pid'] as number, procfsTable())?.sid === handle['pid'], 10_000, 'the routine to lead its session');
    // the machine "crashes": routine and wrapper die together, nobody writes the sentinel
    process.kill(-(handle['wrapperPid'] as number), 'SIGKILL');
    process.kill(-(handle['pid'] as number), 'SIGKILL');
    await waitFor(() => !isSameProcessAlive(handle['pid'] as number, handle['startTime'] as number), 5000, 'the routine to die');
    const restarted = createLocalBackend({ dataDir: data.path, tendVersion: 'restarted', tools: suiteTools });
    expect(await settle(restarted, handle)).toMatchObject({ exitCode: null, signal: null, reason: 'process vanished without an exit code (killed with the machine?)', endedAt: null });
  });

  it('batch waiters die with the daemon killed -9: a waiting one at once, having run nothing; one running a job finishes it, sentinel and all, then leaves', async () => {
    const marker = join(data.path, 'batch.marker');
    const release = join(data.path, 'batch-release');
    const long = makeSpec(data.path, { command: fixture('append-marker.sh'), args: [marker, release, '6'] });
    const quick = makeSpec(data.path, { command: '/bin/true' });
    const { daemon, handle } = await launchFromDaemon(JSON.stringify([long, quick]));
    const [hl, hq] = handle as unknown as Handle[];
    const waiter = (h: Handle) => ({ pid: h['wrapperPid'] as number, startTime: h['wrapperStartTime'] as number });
    const [wl, wq] = [waiter(hl!), waiter(hq!)];
    expect(wl.pid).not.toBe(wq.pid);
    for (const w of [wl, wq]) expect(readFileSync(`/proc/${w.pid}/cmdline`, 'utf8')).toContain(join(data.path, 'runs', '.waiters'));
    // The quick job over, its waiter is back waiting for the next (no child left).
    await waitFor(() => existsSync(join(quick.runDir, 'exit_code')) && procfsTable().all().every((p) => p.ppid !== wq.pid), 10_000, 'the quick job to end');
    await waitFor(() => { try { return readFileSync(marker, 'utf8').includes('ran'); } catch { return false; } }, 10_000, 'the long job to start');

    const died = new Promise((res) => daemon.once('exit', res));
    daemon.kill('SIGKILL');
    await died;
    await waitFor(() => !isSameProcessAlive(wq.pid, wq.startTime), 10_000, 'the waiting one to leave with its daemon', 50);
    expect(isSameProcessAlive(wl.pid, wl.startTime)).toBe(true);
    expect(isSameProcessAlive(hl!['pid'] as number, hl!['startTime'] as number)).toBe(true);

    writeFileSync(release, '');
    await waitFor(() => !isSameProcessAlive(wl.pid, wl.startTime), 10_000, 'the busy one to leave once its job is over', 50);
    expect(readFileSync(join(long.runDir, 'exit_code'), 'utf8')).toBe('6\n');
    const restarted = createLocalBackend({ dataDir: data.path, tendVersion: 'restarted', tools: suiteTools });
    expect(await settle(restarted, hl!)).toMatchObject({ exitCode: 6, signal: null, reason: null });
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toEqual([`ran ${long.runId}`]);
  });

  it("a realtime routine's standby dies with the daemon killed -9, having run nothing; its running instance lives on", async () => {
    const marker = join(data.path, 'standby.marker');
    const release = join(data.path, 'standby-release');
    const spec = makeSpec(data.path, { command: fixture('append-marker.sh'), args: [marker, release, '0'], realtime: true, routineId: 'tester@HOST:survivor' });
    const { daemon, handle } = await launchFromDaemon(JSON.stringify(spec));
    const root = join(data.path, 'standby');
    const standby = await waitFor(() => {
      if (!existsSync(root)) return null;
      return readdirSync(root).map((d) => readPidRecord(join(root, d))).find((r) => r !== null && isSameProcessAlive(r.pid, r.startTime)) ?? null;
    }, 10_000, 'the standby to be ready', 50);

    const died = new Promise((res) => daemon.once('exit', res));
    daemon.kill('SIGKILL');
    await died;
    await waitFor(() => !isSameProcessAlive(standby.pid, standby.startTime) && !isSameProcessAlive(standby.wrapperPid, standby.wrapperStartTime), 10_000, 'the standby to leave with its daemon', 50);
    expect(isSameProcessAlive(handle['pid'] as number, handle['startTime'] as number)).toBe(true);

    writeFileSync(release, '');
    const restarted = createLocalBackend({ dataDir: data.path, tendVersion: 'restarted', tools: suiteTools });
    expect(await settle(restarted, handle)).toMatchObject({ exitCode: 0 });
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toEqual([`ran ${spec.runId}`]);
  });
});
