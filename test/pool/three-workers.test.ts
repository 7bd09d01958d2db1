// Three worker processes with distinct computers and one daemon, on loopback: routines addressed to
// a computer run only there, 300 one-off jobs spread over the workers' slots run exactly once each,
// and a worker killed with -9 mid-job leaves its jobs running and settles them when it comes back.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, jobAlive, killTracked, lines, Pool, POOL_FIXTURES, runDirsUnder, scratch, waitFor, type JobRecord, type Worker } from './harness.js';

const MARK = join(POOL_FIXTURES, 'mark.sh');

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;
let releases: string[] = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  // Released jobs end by themselves; nothing may outlive the scratch dir.
  for (const r of releases) writeFileSync(r, '');
  releases = [];
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

async function threeWorkers(batchjobs: number, env: Record<string, string> = {}): Promise<{ pool: Pool; ws: Worker[] }> {
  box = scratch('tend-pool3-');
  pool = await Pool.start(box.dir, { env });
  const ws = ['u@w1', 'u@w2', 'u@w3'].map((c) => pool!.worker(c, batchjobs));
  const since = Date.now();
  for (const w of ws) w.start();
  for (const w of ws) await pool.seen(w, since);
  return { pool, ws };
}

describe('three workers', () => {
  it('runs each routine only on the computer it is addressed to, in that worker’s own job directories', async () => {
    const { pool, ws } = await threeWorkers(0);
    for (const w of ws) {
      pool.tendOk('routine', 'add', `${w.computer}:where`, '--every', '1s', '--', 'sh', MARK, join(box.dir, `marker-${w.name}`), w.name);
    }
    // Two runs each: the second proves the first was settled (every: counted from the end of a run).
    await waitFor(() => ws.every((w) => pool.db.runs(`${w.computer}:where`).filter((r) => r.status === 'COMPLETED').length >= 2), 45_000, 'two completed runs of every routine');

    const daemonDirs = runDirsUnder(pool.dataDir);
    for (const w of ws) {
      const others = ws.filter((o) => o !== w);
      const marker = lines(join(box.dir, `marker-${w.name}`));
      expect(marker.length).toBeGreaterThanOrEqual(2);
      for (const line of marker) {
        const [id, where, runDir] = line.split(' ');
        expect(id).toBe(w.name);
        expect(where).toBe(w.name); // $POOL_WORKER of the process that launched it
        expect(runDir!.startsWith(join(w.dataDir, 'runs') + '/')).toBe(true);
      }
      const mine = w.runDirs();
      for (const run of pool.db.runs(`${w.computer}:where`).filter((r) => r.status === 'COMPLETED')) {
        expect(run.backend).toBe(`pool:${w.computer}`);
        expect(run.exit_code).toBe(0);
        expect(mine.has(run.id)).toBe(true);
        for (const o of others) expect(o.runDirs().has(run.id)).toBe(false);
        expect(daemonDirs.has(run.id)).toBe(false);
      }
      // Every start command for this computer went to it, and only to it.
      const starts = pool.db.commands().filter((c) => c.kind === 'start' && (JSON.parse(c.payload) as { spec: { routineId: string } }).spec.routineId === `${w.computer}:where`);
      expect(starts.length).toBeGreaterThanOrEqual(2);
      for (const c of starts) expect(c.computer).toBe(w.computer);
    }
  });

  it('runs 300 one-off jobs over the workers’ slots exactly once each', { timeout: 180_000 }, async () => {
    const { pool, ws } = await threeWorkers(4);
    const marker = join(box.dir, 'marker');
    const ids = await pool.postJobs(Array.from({ length: 300 }, (_, i) => ({ command: 'sh', args: [MARK, marker, `j${i}`], name: `j${i}` })));
    await waitFor(() => pool.db.jobs().every((j) => j.status === 'COMPLETED' || j.status === 'ERROR' || j.status === 'CANCEL'), 120_000, 'every job to end', 200);

    const jobs = pool.db.jobs();
    expect(jobs.map((j) => j.id)).toEqual(ids);
    const bad = jobs.filter((j) => j.status !== 'COMPLETED');
    expect(bad, JSON.stringify(bad.slice(0, 5))).toEqual([]);

    const got = lines(marker);
    const names = got.map((l) => l.split(' ')[0]);
    expect(new Set(names).size).toBe(300);
    expect(got.length).toBe(300);
    expect(new Set(names)).toEqual(new Set(Array.from({ length: 300 }, (_, i) => `j${i}`)));
    expect(lines(`${marker}.start`).length).toBe(300);

    // Each ran on the worker that fetched it, in that worker's own job directory.
    const byWorker = new Map<string, number>();
    const where = new Map(got.map((l) => [l.split(' ')[0]!, l.split(' ')[1]!]));
    for (const j of jobs) {
      const w = ws.find((x) => x.computer === j.fetched_by);
      expect(w, `job ${j.id} fetched by ${j.fetched_by}`).toBeDefined();
      expect(where.get(`j${j.id - ids[0]!}`)).toBe(w!.name);
      expect(j.run_dir!.startsWith(join(w!.dataDir, 'runs') + '/')).toBe(true);
      byWorker.set(w!.name, (byWorker.get(w!.name) ?? 0) + 1);
    }
    expect(byWorker.size, JSON.stringify([...byWorker])).toBeGreaterThan(1);
    // The daemon ran none of them itself (TEND_BATCH_SLOTS=0).
    expect(runDirsUnder(pool.dataDir).size).toBe(0);
    // Nothing failed along the way and nothing was refused.
    expect(pool.db.events('job:failed')).toEqual([]);
    for (const w of ws) expect(w.log).not.toMatch(/refused/);
  });

  it('settles the jobs of a worker killed with -9 mid-job from their directories once it is back, each exactly once', async () => {
    const { pool, ws } = await threeWorkers(3);
    const w1 = ws[0]!;
    const marker = join(box.dir, 'marker');
    const release = (id: number) => join(box.dir, `release-${id}`);
    // Nine jobs fill every slot (3 workers x 3); each waits for a release file of its own.
    const ids = await pool.postJobs(Array.from({ length: 9 }, (_, i) => ({ command: 'sh', args: [MARK, marker, `k${i}`, join(box.dir, `release-${i + 1}`)], name: `k${i}` })));
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    releases = ids.map(release);
    await waitFor(() => pool.db.jobs().every((j) => j.status === 'RUNNING'), 30_000, 'all nine jobs RUNNING');
    await waitFor(() => lines(`${marker}.start`).length === 9, 10_000, 'all nine jobs to have started');
    const onW1 = pool.db.jobs().filter((j) => j.fetched_by === w1.computer);
    expect(onW1.length).toBe(3);
    const [held, ...finished] = onW1 as [JobRecord, ...JobRecord[]];

    await w1.kill('SIGKILL');
    // The jobs outlive their worker.
    for (const j of onW1) expect(jobAlive(j.run_dir!)).toBe(true);

    // Two of w1's jobs and all the others end while w1 is down: the directory records it.
    for (const j of pool.db.jobs()) if (j.id !== held.id) writeFileSync(release(j.id), '');
    await waitFor(() => pool.db.jobs().filter((j) => j.fetched_by !== w1.computer).every((j) => j.status === 'COMPLETED'), 20_000, 'the other workers’ jobs to complete');
    await waitFor(() => finished.every((j) => existsSync(join(j.run_dir!, 'exit_code'))), 20_000, 'w1’s released jobs to exit');
    // Not settled, not handed to anyone else: a missing worker is not a failed job.
    for (const j of onW1) expect(pool.db.job(j.id)!.status).toBe('RUNNING');
    expect(jobAlive(held.run_dir!)).toBe(true);

    const since = Date.now();
    w1.start();
    await pool.seen(w1, since);
    await waitFor(() => finished.every((j) => pool.db.job(j.id)!.status === 'COMPLETED'), 20_000, 'w1’s finished jobs to be reported');
    // The one still running was re-adopted: it ends after the restart and is reported too.
    expect(pool.db.job(held.id)!.status).toBe('RUNNING');
    writeFileSync(release(held.id), '');
    await waitFor(() => pool.db.job(held.id)!.status === 'COMPLETED', 20_000, 'the re-adopted job to complete');

    const got = lines(marker).map((l) => l.split(' ')[0]);
    expect(got.length).toBe(9);
    expect(new Set(got).size).toBe(9);
    expect(lines(`${marker}.start`).length).toBe(9);
    expect(pool.db.jobs().every((j) => j.status === 'COMPLETED' && j.exit_code === 0)).toBe(true);
    for (const j of onW1) expect(pool.db.job(j.id)!.fetched_by).toBe(w1.computer);
    expect(pool.db.events('job:failed')).toEqual([]);
    // The restarted worker launched nothing new: the same three job directories, no more.
    expect([...w1.runDirs().keys()].sort()).toEqual(onW1.map((j) => `job-${j.id}`).sort());
  });
});
