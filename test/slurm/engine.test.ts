// The Slurm backend under a real Engine (SQLite, the pass, the ledger) and the real cluster: a
// routine that chooses `backend: slurm`, and batch-job dependency chains that cross the local
// and Slurm backends in both directions, a failure included.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSlurmRecord } from '../../worker/slurm/index.js';
import { tendOk } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { COMPUTER, EngineHarness, lines } from '../helpers/engine-harness.js';
import { cancelJobsUnder, ensureCluster, FIXTURES, HAVE_SLURM, lockCluster, SKIP_MESSAGE, slurm } from './helpers.js';

if (!HAVE_SLURM) it.skip(SKIP_MESSAGE, () => undefined);

describe.runIf(HAVE_SLURM)('Slurm backend under the engine', () => {
  let unlock: () => Promise<void>;
  let h: EngineHarness;

  beforeAll(async () => {
    unlock = await lockCluster('shared');
    ensureCluster();
    h = new EngineHarness({ intervalMs: 200, maxParallel: 20 });
  }, 320_000);

  afterAll(async () => {
    if (h) cancelJobsUnder(h.dir);
    await h?.close();
    await unlock?.();
  });

  const done = (id: number) => ['COMPLETED', 'ERROR', 'CANCEL'].includes(h.job(id).status);

  it('runs a batch routine with backend slurm through sbatch, with its options, to COMPLETED', async () => {
    const out = join(h.dir, 'routine-out');
    h.define('sim/step', {
      command: '/bin/sh',
      args: ['-c', `echo "on $SLURM_JOB_ID with $SLURM_CPUS_PER_TASK cpus" > ${out}`],
      at: '2099-01-01T00:00',
      backend: 'slurm',
      slurm: { time: '10m', cpus: 2, memory: '256M' },
    });
    const run = h.engine.runNow(`${COMPUTER}:sim/step`);
    const settled = await h.waitRun('sim/step', (r) => r.id === run.id && ['COMPLETED', 'ERROR'].includes(r.status), 60_000);
    expect(settled.status, settled.reason ?? '').toBe('COMPLETED');
    expect(settled.backend).toBe('slurm');
    const rec = readSlurmRecord(settled.runDir!)!;
    expect(readFileSync(out, 'utf8').trim()).toBe(`on ${rec.jobId} with 2 cpus`);
    const info = slurm('scontrol', ['--oneliner', 'show', 'job', rec.jobId]);
    for (const field of ['JobState=COMPLETED', 'TimeLimit=00:10:00', 'NumCPUs=2', 'MinMemoryNode=256M']) expect(info).toContain(field);
    expect(h.eventsOf('run:submitted').find((e) => e.runId === run.id)?.message).toMatch(/submitted to slurm/);
  }, 90_000);

  it('runs a dependency chain local -> slurm -> local, each step after the one before', async () => {
    const a = join(h.dir, 'a.txt');
    const b = join(h.dir, 'b.txt');
    const c = join(h.dir, 'c.txt');
    const stamp = (from: string | null, to: string, word: string) => ['-c', `${from ? `cat ${from} && ` : ''}echo "${word} $(date +%s%N)" >> ${to}${from ? ` && cat ${from} >> ${to}` : ''}`];
    const j1 = h.post({ command: '/bin/sh', args: stamp(null, a, 'local-1'), computer: COMPUTER });
    const j2 = h.post({ command: '/bin/sh', args: stamp(a, b, 'slurm-2'), after: [j1.id], backend: 'slurm', computer: COMPUTER });
    const j3 = h.post({ command: '/bin/sh', args: stamp(b, c, 'local-3'), after: [j2.id], computer: COMPUTER });
    expect([h.job(j2.id).status, h.job(j3.id).status]).toEqual(['WAITING', 'WAITING']);
    await waitFor(() => [j1, j2, j3].every((j) => done(j.id)), 90_000, 'the chain to finish', 100);
    const [r1, r2, r3] = [j1, j2, j3].map((j) => h.job(j.id));
    expect([r1!.status, r2!.status, r3!.status], JSON.stringify([r1, r2, r3].map((j) => j!.reason))).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    expect([r1!.backend, r2!.backend, r3!.backend]).toEqual(['local', 'slurm', 'local']);
    expect(r2!.startedAt!).toBeGreaterThanOrEqual(r1!.endedAt!);
    expect(r3!.startedAt!).toBeGreaterThanOrEqual(r2!.endedAt!);
    // c holds local-3, then b: slurm-2 then a: local-1 — each step saw the previous one's output.
    expect(lines(c).map((l) => l.split(' ')[0])).toEqual(['local-3', 'slurm-2', 'local-1']);
    expect(readSlurmRecord(r2!.runDir!)?.jobId).toMatch(/^\d+$/);
  }, 120_000);

  it('runs slurm -> local -> slurm, and a Slurm job that fails cancels what waits on it', async () => {
    const marker = join(h.dir, 'never');
    const s1 = h.post({ command: join(FIXTURES, 'exit0.sh'), backend: 'slurm', computer: COMPUTER });
    const l2 = h.post({ command: join(FIXTURES, 'exit0.sh'), after: [s1.id], computer: COMPUTER });
    const s3 = h.post({ command: join(FIXTURES, 'exit3.sh'), after: [l2.id], backend: 'slurm', slurm: { time: '5' }, computer: COMPUTER });
    const l4 = h.post({ command: '/bin/sh', args: ['-c', `touch ${marker}`], after: [s3.id], computer: COMPUTER });
    await waitFor(() => [s1, l2, s3, l4].every((j) => done(j.id)), 90_000, 'the chain to finish', 100);
    const got = [s1, l2, s3, l4].map((j) => h.job(j.id));
    expect(got.map((j) => j.status)).toEqual(['COMPLETED', 'COMPLETED', 'ERROR', 'CANCEL']);
    expect(got[2]!.exitCode).toBe(3);
    expect(got[2]!.reason).toMatch(/^exit 3 \(Slurm job \d+ FAILED\)$/);
    expect(got[3]!.reason).toMatch(new RegExp(`dependency job ${s3.id}`));
    expect(lines(marker)).toEqual([]);
  }, 120_000);

  it('tend job cancel stops a running Slurm job through the Slurm backend (the CLI had only the local one)', async () => {
    const j = h.post({ command: '/bin/sleep', args: ['600'], backend: 'slurm', computer: COMPUTER });
    await waitFor(() => h.job(j.id).status === 'RUNNING', 60_000, 'the Slurm job to run');
    const slurmId = readSlurmRecord(h.job(j.id).runDir!)!.jobId;
    tendOk(h.dir, ['job', 'cancel', String(j.id)], { TEND_KILL_GRACE_MS: '1000' });
    expect(h.job(j.id).status).toBe('CANCEL');
    const state = () => /JobState=(\w+)/.exec(slurm('scontrol', ['--oneliner', 'show', 'job', slurmId]))?.[1] ?? null;
    await waitFor(() => !['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING'].includes(state() ?? ''), 30_000, `Slurm job ${slurmId} to end`);
  }, 120_000);
});
