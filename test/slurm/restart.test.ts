// The ledger is the restart mechanism, with Slurm too: a daemon killed with -9 while Slurm jobs
// are queued and running leaves them to Slurm; the next daemon re-polls them from the ledger and
// settles each exactly once, and nothing is submitted twice. Real daemons (the built CLI), the
// real cluster.
import Database from 'better-sqlite3';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJob } from '../../main/engine/ops/jobs.js';
import { Store } from '../../main/engine/store/store.js';
import { jobNameFor, readSlurmRecord } from '../../worker/slurm/index.js';
import { assertBuilt, killTracked } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { lines } from '../helpers/engine-harness.js';
import { cancelJobsUnder, ensureCluster, FIXTURES, GATED, HAVE_SLURM, jobsNamed, lockCluster, scratch, SKIP_MESSAGE, slurm } from './helpers.js';

if (!HAVE_SLURM) it.skip(SKIP_MESSAGE, () => undefined);

interface JobRecord {
  id: number;
  status: string;
  reason: string | null;
  run_dir: string | null;
}

describe.runIf(HAVE_SLURM)('a daemon killed with -9 while Slurm jobs are queued and running', () => {
  let unlock: () => Promise<void>;
  let box: ReturnType<typeof scratch>;

  beforeAll(async () => {
    assertBuilt();
    unlock = await lockCluster('shared');
    ensureCluster();
    box = scratch('tend-slurm-restart-');
  }, 320_000);

  afterAll(async () => {
    await killTracked();
    if (box) {
      cancelJobsUnder(box.dir);
      box.remove();
    }
    await unlock?.();
  });

  function jobs(): JobRecord[] {
    const db = new Database(join(box.dir, 'tend.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(`SELECT id, status, reason, run_dir FROM jobs ORDER BY id`).all() as JobRecord[];
    } finally {
      db.close();
    }
  }

  function events(type: string): { job_id: number }[] {
    const db = new Database(join(box.dir, 'tend.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(`SELECT job_id FROM events WHERE type = ? ORDER BY id`).all(type) as { job_id: number }[];
    } finally {
      db.close();
    }
  }

  it('leaves them to Slurm; the next daemon re-polls the ledger and settles each exactly once', async () => {
    const dir = box.dir;
    const env = { TEND_MAX_PARALLEL: '50', TEND_DAEMON_INTERVAL_MS: '200', TEND_API: 'off' };
    const first = await new Daemon(dir, env).ready();

    // Three jobs that run until released, three held in Slurm's queue (PENDING until released).
    const release = join(dir, 'release');
    const store = Store.open(join(dir, 'tend.db'));
    const running: number[] = [];
    const queued: number[] = [];
    try {
      for (let i = 0; i < 3; i++) running.push(postJob(store, { command: GATED, args: [join(dir, `run${i}`), release], backend: 'slurm' }, Date.now()).id);
      for (let i = 0; i < 3; i++) queued.push(postJob(store, { command: join(FIXTURES, 'append-marker.sh'), args: [join(dir, `queued${i}`)], backend: 'slurm', slurm: { extra: ['--hold'] } }, Date.now()).id);
    } finally {
      store.close();
    }
    process.kill(first.pid, 'SIGUSR2');

    const slurmId = (jobId: number) => {
      const runDir = jobs().find((j) => j.id === jobId)?.run_dir;
      return runDir ? (readSlurmRecord(runDir)?.jobId ?? null) : null;
    };
    await waitFor(() => running.every((id) => jobs().find((j) => j.id === id)?.status === 'RUNNING') && running.every((_, i) => lines(join(dir, `run${i}.start`)).length === 1), 60_000, 'three jobs RUNNING in Slurm', 100);
    await waitFor(() => queued.every((id) => slurmId(id) !== null), 30_000, 'three jobs submitted and held');
    for (const id of queued) {
      expect(jobs().find((j) => j.id === id)?.status).toBe('FETCHED');
      expect(slurm('squeue', ['--noheader', `--jobs=${slurmId(id)}`, '--format=%T']).trim()).toBe('PENDING');
    }

    // kill -9: no goodbye. The running jobs finish with no daemon at all.
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    writeFileSync(release, '');
    await waitFor(() => running.every((_, i) => lines(join(dir, `run${i}`)).length === 1), 60_000, 'the released jobs to finish with no daemon');
    await waitFor(() => running.every((id) => existsSync(join(jobs().find((j) => j.id === id)!.run_dir!, 'exit_code'))), 30_000, 'their sentinels');
    expect(jobs().filter((j) => running.includes(j.id)).map((j) => j.status)).toEqual(['RUNNING', 'RUNNING', 'RUNNING']);

    const second = await new Daemon(dir, env).ready();
    await waitFor(() => running.every((id) => jobs().find((j) => j.id === id)?.status === 'COMPLETED'), 30_000, 'the next daemon to settle the finished jobs');
    // The held ones are still queued in Slurm, known to the new daemon only through the ledger.
    for (const id of queued) expect(jobs().find((j) => j.id === id)?.status).toBe('FETCHED');
    slurm('scontrol', ['release', queued.map((id) => slurmId(id)!).join(',')]);
    await waitFor(() => queued.every((id) => jobs().find((j) => j.id === id)?.status === 'COMPLETED'), 60_000, 'the released queued jobs to complete');

    const all = jobs();
    for (const j of all) expect(j.status, `job ${j.id}: ${j.reason}`).toBe('COMPLETED');
    // Each ran once, was submitted once (one Slurm job of its name), and settled once.
    running.forEach((_, i) => expect(lines(join(dir, `run${i}`))).toHaveLength(1));
    queued.forEach((_, i) => expect(lines(join(dir, `queued${i}`))).toHaveLength(1));
    for (const j of all) expect(jobsNamed(jobNameFor(`job-${j.id}`, j.run_dir!)), `job ${j.id}`).toEqual([slurmId(j.id)]);
    const count = (type: string) => all.map((j) => events(type).filter((e) => e.job_id === j.id).length);
    expect(count('job:submitted')).toEqual([1, 1, 1, 1, 1, 1]);
    expect(count('job:completed')).toEqual([1, 1, 1, 1, 1, 1]);
    expect(second.exit).toBeNull();
  }, 200_000);
});
