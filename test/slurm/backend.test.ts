// The Slurm backend against the real single-node cluster (scripts/slurm/up.sh): what a job ends as
// (success, exit 3, time limit, scancel from outside, cancel from Tend), what the job directory
// holds, that options reach sbatch, that a submit is never repeated, and that nodes which cannot
// see the run dir are explained. Tests run concurrently: the time limit test alone takes 60-90 s
// (Slurm counts limits in minutes and checks them every 30 s).
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Handle, Outcome, PollState } from '../../main/engine/backend.js';
import { isSuccess } from '../../main/engine/backend.js';
import { readSentinel } from '../../worker/jobdir/jobdir.js';
import { logBytesOnDisk, tailLog } from '../../worker/jobdir/logs.js';
import { createSlurmBackend, jobNameFor, type SlurmBackend } from '../../worker/slurm/index.js';
import { readSlurmRecord } from '../../worker/slurm/jobdir.js';
import { waitFor } from '../helpers/wait.js';
import { accounting, cancelJobsUnder, countingRunner, ensureCluster, FIXTURES, HAVE_SLURM, jobSpec, jobsNamed, lockCluster, scratch, SKIP_MESSAGE, slurm, type CountingRunner } from './helpers.js';

const fx = (name: string) => join(FIXTURES, name);

if (!HAVE_SLURM) it.skip(SKIP_MESSAGE, () => undefined);

describe.runIf(HAVE_SLURM).concurrent('Slurm backend on a real cluster', () => {
  let box: ReturnType<typeof scratch>;
  let runner: CountingRunner;
  let backend: SlurmBackend;
  let unlock: () => Promise<void>;

  beforeAll(async () => {
    unlock = await lockCluster('shared');
    ensureCluster();
    box = scratch('tend-slurm-');
    runner = countingRunner();
    backend = createSlurmBackend({ dataDir: box.dir, tendVersion: 'test', runner, killGraceMs: 2000 });
  }, 320_000);

  afterAll(async () => {
    // Nothing of ours may outlive the tests in the cluster.
    if (box) cancelJobsUnder(box.dir);
    box?.remove();
    await unlock?.();
  });

  async function settle(handle: Handle, timeoutMs = 60_000): Promise<{ outcome: Outcome; seen: PollState['state'][] }> {
    const seen: PollState['state'][] = [];
    await waitFor(
      async () => {
        const [s] = await backend.poll([handle]);
        if (seen[seen.length - 1] !== s!.state) seen.push(s!.state);
        if (s!.state === 'lost') throw new Error(`lost: ${s!.reason}`);
        return s!.state === 'done';
      },
      timeoutMs,
      `Slurm job ${String(handle['jobId'])} to be done`,
      200,
    );
    return { outcome: await backend.fetch(handle), seen };
  }

  it('health answers ok while the controller and a node are up', async () => {
    expect(await backend.health()).toEqual({ ok: true, reason: null });
  });

  it('runs a job to success: handle {cluster, jobId, runDir}, the local job directory, Slurm agrees', async () => {
    const spec = jobSpec(box.dir, fx('print-env.sh'), ['GREETING', '--password=hunter2'], { env: { GREETING: 'hello' } });
    const handle = await backend.submit(spec);
    expect(handle).toMatchObject({ backend: 'slurm', cluster: 'tend', runDir: spec.runDir, runId: spec.runId });
    expect(String(handle['jobId'])).toMatch(/^\d+$/);
    const { outcome } = await settle(handle);
    expect(outcome).toMatchObject({ exitCode: 0, signal: null, reason: null });
    expect(isSuccess(outcome)).toBe(true);
    expect(outcome.startedAt).toBeGreaterThan(0);
    expect(outcome.endedAt).toBeGreaterThanOrEqual(outcome.startedAt!);

    // The same directory as a local job: wrapper, manifest, streams, sentinel, pid record.
    for (const f of ['run.sh', 'manifest.json', 'stdout.log', 'stderr.log', 'exit_code', 'pid.json', 'slurm.sh', 'slurm.json']) expect(existsSync(join(spec.runDir, f)), f).toBe(true);
    const stdout = readFileSync(join(spec.runDir, 'stdout.log'), 'utf8');
    expect(stdout).toContain('GREETING=hello');
    expect(stdout).toContain(`TEND_RUN_ID=${spec.runId}`);
    const manifest = JSON.parse(readFileSync(join(spec.runDir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ backend: 'slurm', runId: spec.runId, envNames: ['GREETING'], slurm: { cluster: 'tend', jobId: handle['jobId'] } });
    expect(JSON.stringify(manifest)).not.toContain('hunter2');
    expect(readSlurmRecord(spec.runDir)).toMatchObject({ cluster: 'tend', jobId: handle['jobId'], jobName: jobNameFor(spec.runId, spec.runDir) });

    // Slurm's own view: COMPLETED 0:0, and the command line (with its secret) is not in the job record.
    expect(await accounting(String(handle['jobId']))).toEqual({ state: 'COMPLETED', exit: '0:0' });
    const record = slurm('scontrol', ['--oneliner', 'show', 'job', String(handle['jobId'])]);
    expect(record).not.toContain('hunter2');
    expect(record).toContain(`Command=${join(spec.runDir, 'slurm.sh')}`);
  });

  it('delivers the command and its arguments to the routine byte for byte (spaces, quotes, newlines, empty)', async () => {
    const args = ['%s|', 'two words', "it's", '"q"', '$(id) `id`', '', 'line1\nline2', 'ünï ✓'];
    const spec = jobSpec(box.dir, '/usr/bin/printf', args);
    const { outcome } = await settle(await backend.submit(spec));
    expect(outcome.exitCode).toBe(0);
    expect(readFileSync(join(spec.runDir, 'stdout.log'), 'utf8')).toBe(args.slice(1).map((a) => `${a}|`).join(''));
  });

  it('keeps the log cap: a flood past it leaves the newest output, within the cap on disk', async () => {
    const spec = { ...jobSpec(box.dir, fx('flood.sh'), ['20000']), logCapBytes: 8192 };
    const { outcome } = await settle(await backend.submit(spec));
    expect(outcome.exitCode).toBe(0);
    expect(logBytesOnDisk(spec.runDir, 'stdout')).toBeLessThanOrEqual(8192);
    expect(tailLog(spec.runDir, 'stdout', 100).endsWith('line 00020000\nEND\n')).toBe(true);
  });

  it('reports exit 3 with Slurm FAILED in the reason (and Slurm records 3:0)', async () => {
    const handle = await backend.submit(jobSpec(box.dir, fx('exit3.sh')));
    const { outcome } = await settle(handle);
    expect(outcome.exitCode).toBe(3);
    expect(outcome.signal).toBeNull();
    expect(outcome.reason).toBe(`exit 3 (Slurm job ${String(handle['jobId'])} FAILED)`);
    expect(await accounting(String(handle['jobId']))).toEqual({ state: 'FAILED', exit: '3:0' });
  });

  it('reports a job Slurm ended at its time limit as TIMEOUT', async () => {
    const spec = jobSpec(box.dir, fx('hang.sh'), [], { slurm: { time: '00:01:00' } });
    const handle = await backend.submit(spec);
    expect(slurm('scontrol', ['--oneliner', 'show', 'job', String(handle['jobId'])])).toContain('TimeLimit=00:01:00');
    const { outcome, seen } = await settle(handle, 150_000);
    expect(seen).toContain('running');
    expect(outcome.reason).toMatch(new RegExp(`^Slurm job ${String(handle['jobId'])} TIMEOUT: time limit reached`));
    expect(isSuccess(outcome)).toBe(false);
    expect(readFileSync(join(spec.runDir, 'wrapper.log'), 'utf8')).toContain('DUE TO TIME LIMIT');
    expect((await accounting(String(handle['jobId']))).state).toBe('TIMEOUT');
  }, 170_000);

  it('reports a job cancelled from outside with scancel as CANCELLED', async () => {
    const spec = jobSpec(box.dir, fx('hang.sh'));
    const handle = await backend.submit(spec);
    await waitFor(async () => (await backend.poll([handle]))[0]!.state === 'running' && existsSync(join(spec.runDir, 'pid.json')), 30_000, 'the job to run');
    slurm('scancel', [String(handle['jobId'])]);
    const { outcome } = await settle(handle);
    expect(outcome.reason).toMatch(new RegExp(`^Slurm job ${String(handle['jobId'])} CANCELLED( by \\d+)?: cancelled in Slurm; the routine `));
    expect(isSuccess(outcome)).toBe(false);
  });

  it('cancel stops a running job with TERM and a queued one at once; fetch says cancelled', async () => {
    const running = await backend.submit(jobSpec(box.dir, fx('hang.sh')));
    const queued = await backend.submit(jobSpec(box.dir, fx('exit0.sh'), [], { slurm: { extra: ['--hold'] } }));
    await waitFor(async () => (await backend.poll([running]))[0]!.state === 'running' && existsSync(join(String(running['runDir']), 'pid.json')), 30_000, 'the job to run');
    expect((await backend.poll([queued]))[0]!.state).toBe('queued');
    await Promise.all([backend.cancel(running, 2000), backend.cancel(queued, 2000)]);
    const r = await settle(running);
    // How the routine ended is the wrapper's word: Slurm signals run.sh and the routine together, and
    // the local wrapper can then record -1 instead of signal:TERM (a race in its wait loop).
    expect(r.outcome.reason).toMatch(/^cancelled \((stopped by TERM|exited -?\d+); Slurm job \d+ FAILED\)$/);
    const q = await settle(queued);
    expect(q.outcome.reason).toMatch(/^cancelled \(while queued in Slurm; Slurm job \d+ CANCELLED\)$/);
    expect(existsSync(join(String(queued['runDir']), 'pid.json'))).toBe(false); // it never ran
  });

  it('cancel gives a job that ignores TERM the grace period, then Slurm kills it', async () => {
    const handle = await backend.submit(jobSpec(box.dir, fx('ignore-term.sh')));
    await waitFor(async () => (await backend.poll([handle]))[0]!.state === 'running' && existsSync(join(String(handle['runDir']), 'pid.json')), 30_000, 'the job to run');
    const t0 = Date.now();
    await backend.cancel(handle, 1500);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
    const { outcome } = await settle(handle);
    expect(outcome.reason).toMatch(/^cancelled \(.* after a 1500 ms grace period; Slurm job \d+ CANCELLED\)$/);
  }, 90_000);

  it('submit is idempotent per run dir: a resubmission adopts the job, even one whose id was never written', async () => {
    const spec = jobSpec(box.dir, fx('append-marker.sh'), [join(box.dir, `marker-${Date.now()}`)]);
    const first = await backend.submit(spec);
    const again = await backend.submit(spec);
    expect(again).toEqual(first);
    // As if Tend died between sbatch and writing slurm.json: the job is found by its name.
    renameSync(join(spec.runDir, 'slurm.json'), join(spec.runDir, 'slurm.json.lost'));
    const adopted = await backend.submit(spec);
    expect(adopted['jobId']).toBe(first['jobId']);
    const { outcome } = await settle(adopted);
    expect(outcome.exitCode).toBe(0);
    expect(readFileSync(String(spec.args[0]), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    expect(jobsNamed(jobNameFor(spec.runId, spec.runDir))).toEqual([String(first['jobId'])]);
  });

  it('passes partition, time, cpus, memory and extra flags to sbatch', async () => {
    const spec = jobSpec(box.dir, fx('exit0.sh'), [], { slurm: { partition: 'debug', time: '00:05:00', cpus: 2, memory: '600M', extra: ['--comment=tend-test', '--hold'] } });
    const handle = await backend.submit(spec);
    const rec = slurm('scontrol', ['--oneliner', 'show', 'job', String(handle['jobId'])]);
    expect(rec).toContain('Partition=debug');
    expect(rec).toContain('TimeLimit=00:05:00');
    expect(rec).toMatch(/NumCPUs=2\b/);
    expect(rec).toMatch(/MinMemoryNode=600M\b/);
    expect(rec).toContain('Comment=tend-test');
    expect(rec).toContain('Requeue=0');
    slurm('scontrol', ['release', String(handle['jobId'])]);
    expect((await settle(handle)).outcome.exitCode).toBe(0);
  });

  it('polls many jobs with one squeue (and at most one sacct) per pass; fetch asks Slurm nothing more', async () => {
    const handles = await Promise.all(Array.from({ length: 6 }, (_, i) => backend.submit(jobSpec(box.dir, fx(i % 2 ? 'exit0.sh' : 'exit3.sh')))));
    const own = countingRunner();
    const b = createSlurmBackend({ dataDir: box.dir, tendVersion: 'test', runner: own });
    await waitFor(async () => (await b.poll(handles)).every((s) => s.state === 'done'), 60_000, 'all six jobs done', 300);
    own.reset();
    const states = await b.poll(handles);
    expect(states.map((s) => s.state)).toEqual(Array(6).fill('done'));
    expect(own.counts.squeue).toBe(1);
    expect(own.counts.sacct).toBe(0); // every run dir has its sentinel: no exit code needed from Slurm
    expect(own.counts.scontrol).toBe(1); // ping (the cluster name was asked once, before)
    const before = { ...own.counts };
    const outcomes = await Promise.all(handles.map((h) => b.fetch(h)));
    expect(own.counts).toEqual(before);
    expect(outcomes.map((o) => o.exitCode)).toEqual([3, 0, 3, 0, 3, 0]);
  });

  it('takes the exit code from Slurm when the run dir has no sentinel, with one sacct for all such jobs', async () => {
    const handles = await Promise.all([0, 1].map(() => backend.submit(jobSpec(box.dir, fx('exit3.sh')))));
    await waitFor(() => handles.every((h) => readSentinel(String(h['runDir']))), 60_000, 'both sentinels');
    for (const h of handles) await waitFor(async () => (await backend.poll([h]))[0]!.state === 'done', 30_000, 'Slurm to end the job');
    for (const h of handles) renameSync(join(String(h['runDir']), 'exit_code'), join(String(h['runDir']), 'exit_code.gone'));
    const own = countingRunner();
    const b = createSlurmBackend({ dataDir: box.dir, tendVersion: 'test', runner: own });
    // Slurm said over a moment ago: the poll gives the sentinel a few seconds to show (NFS), then decides.
    await waitFor(async () => (await b.poll(handles)).every((s) => s.state === 'done'), 20_000, 'both done without a sentinel', 500);
    own.reset();
    expect((await b.poll(handles)).map((s) => s.state)).toEqual(['done', 'done']);
    expect(own.counts.squeue).toBe(1);
    expect(own.counts.sacct).toBe(1);
    for (const h of handles) expect(await b.fetch(h)).toMatchObject({ exitCode: 3, reason: `exit 3 (Slurm job ${String(h['jobId'])} FAILED)` });
  });

  it('explains a node that cannot see the job directory', async () => {
    const spec = jobSpec(box.dir, fx('exit0.sh'), [], { slurm: { extra: ['--hold'] } });
    const handle = await backend.submit(spec);
    // What a node without the shared filesystem finds: no run.sh where the batch script looks.
    renameSync(join(spec.runDir, 'run.sh'), join(spec.runDir, 'run.sh.hidden'));
    slurm('scontrol', ['release', String(handle['jobId'])]);
    const { outcome } = await settle(handle);
    expect(outcome.reason).toMatch(/ran on vm that cannot see the job directory .*put Tend's data dir on a filesystem the nodes mount/);
    expect(readFileSync(join(spec.runDir, 'wrapper.log'), 'utf8')).toMatch(/is not visible on/);
  });

  it('reports a handle Slurm has never heard of as lost, not as done', async () => {
    const spec = jobSpec(box.dir, fx('exit0.sh'));
    const [state] = await backend.poll([{ backend: 'slurm', cluster: 'tend', jobId: '999999999', runDir: spec.runDir, runId: spec.runId, submittedAt: Date.now() }]);
    expect(state).toEqual({ state: 'lost', reason: expect.stringContaining('Slurm has no record of job 999999999') });
  });
});
