// One-off batch jobs and worker claims: a job addressed to a computer goes only to that computer's
// worker; a PENDING job is FETCHED by exactly one claimant, even with many long polls waiting for it
// at once; a job posted while workers wait is fetched at once, not after a poll interval.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, killTracked, lines, Pool, POOL_FIXTURES, readState, scratch, waitFor, type HttpResult } from './harness.js';

const MARK = join(POOL_FIXTURES, 'mark.sh');

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

type Claimed = { jobs: { id: number; spec: { runId: string } }[] };

describe('claims', () => {
  it('sends a job addressed to a computer only to that computer, while the others take the rest', async () => {
    box = scratch('tend-addressed-');
    pool = await Pool.start(box.dir);
    const ws = ['u@w1', 'u@w2', 'u@w3'].map((c) => pool!.worker(c, 2));
    const since = Date.now();
    for (const w of ws) w.start();
    for (const w of ws) await pool.seen(w, since);
    const marker = join(box.dir, 'marker');
    // Twelve jobs for w2 only, twelve for anyone: w2 has two slots, so the others must not help with its share.
    const inputs = Array.from({ length: 24 }, (_, i) => ({ command: 'sh', args: [MARK, marker, `a${i}`], ...(i % 2 === 0 ? { computer: 'u@w2' } : {}) }));
    const ids = await pool.postJobs(inputs);
    await waitFor(() => pool!.db.jobs().every((j) => j.status === 'COMPLETED'), 60_000, 'every job to complete', 100);
    const where = new Map(lines(marker).map((l) => [l.split(' ')[0]!, l.split(' ')[1]!]));
    expect(where.size).toBe(24);
    for (const [i, id] of ids.entries()) {
      const j = pool.db.job(id)!;
      expect(where.get(`a${i}`)).toBe(j.fetched_by!.split('@')[1]);
      if (i % 2 === 0) {
        expect(j.computer).toBe('u@w2');
        expect(j.fetched_by).toBe('u@w2');
      }
    }
    expect(lines(marker).length).toBe(24);
  });

  it('never hands one PENDING job to two of many claimants polling at once', { timeout: 90_000 }, async () => {
    box = scratch('tend-claims-');
    // A long poll may last 30 s (the most a claim may ask for; half the offline limit is more here).
    pool = await Pool.start(box.dir, { env: { TEND_WORKER_OFFLINE_MS: '120000' } });
    const computers = Array.from({ length: 12 }, (_, i) => `u@c${i}`);
    const tokens = computers.map((c) => pool!.token(c));
    const claim = (token: string, slots: number, wait: number) => pool!.http<Claimed>('POST', '/api/worker/jobs/claim', { slots, wait }, token);

    // Twelve long polls wait; one job arrives and wakes them all; exactly one gets it, at once (a
    // poll that ran out would answer only after 30 s).
    const answers: HttpResult<Claimed>[] = [];
    const waiting = tokens.map((t) => claim(t, 1, 30_000).then((a) => answers.push(a)));
    await waitFor(() => computers.every((c) => pool!.db.worker(c)?.last_seen), 20_000, 'every claimant to be waiting');
    expect(answers).toEqual([]);
    const [id] = await pool.postJobs([{ command: 'true' }]);
    await waitFor(() => answers.length === 1, 15_000, 'the new job to be handed to one waiting claimant');
    expect(answers[0]!.body.value!.jobs.map((j) => j.id)).toEqual([id]);
    // The others wait on: passes wake them (every 200 ms here), but with nothing to take a long poll
    // does not answer empty-handed.
    const beats = new Set<string>();
    await waitFor(() => beats.add(readState(pool!.dataDir)?.lastHeartbeat ?? '').size > 5, 15_000, 'a few passes');
    expect(answers).toHaveLength(1);
    // A job each answers them: twelve jobs, twelve claimants, each job in exactly one answer.
    const rest = await pool.postJobs(Array.from({ length: 11 }, () => ({ command: 'true' })));
    await waitFor(() => answers.length === tokens.length, 15_000, 'a job for each of the other claimants');
    await Promise.all(waiting);
    expect(answers.map((a) => a.status)).toEqual(Array(tokens.length).fill(200));
    expect(answers.map((a) => a.body.value!.jobs.length)).toEqual(Array(tokens.length).fill(1));
    expect(new Set(answers.map((a) => a.body.value!.jobs[0]!.id))).toEqual(new Set([id, ...rest]));
    const job = pool.db.job(id!)!;
    expect(job.status).toBe('FETCHED');
    expect(computers).toContain(job.fetched_by);
    expect(pool.db.events('job:fetched').filter((e) => e.job_id === id).length).toBe(1);

    // Many jobs, many claimants asking for several at once, in rounds: each job in exactly one answer.
    const more = await pool.postJobs(Array.from({ length: 60 }, () => ({ command: 'true' })));
    const got: number[] = [];
    for (let round = 0; round < 10 && got.length < more.length; round++) {
      const rs = await Promise.all(tokens.map((t) => claim(t, 3, 0)));
      for (const r of rs) got.push(...r.body.value!.jobs.map((j) => j.id));
    }
    expect(got.length).toBe(more.length);
    expect(new Set(got)).toEqual(new Set(more));
    expect(pool.db.jobs().filter((j) => more.includes(j.id)).every((j) => j.status === 'FETCHED' && computers.includes(j.fetched_by!))).toBe(true);
    expect(pool.db.events('job:fetched').length).toBe(72);
  });

  it('refuses a report about a job another computer holds', async () => {
    box = scratch('tend-claim-report-');
    pool = await Pool.start(box.dir);
    const [a, b] = [pool.token('u@a'), pool.token('u@b')];
    const [id] = await pool.postJobs([{ command: 'true' }]);
    const r = await pool.http<Claimed>('POST', '/api/worker/jobs/claim', { slots: 1 }, a);
    expect(r.body.value!.jobs.map((j) => j.id)).toEqual([id]);
    const stolen = await pool.http<{ accepted: number; refused: { id: string; reason: string }[] }>(
      'POST',
      '/api/worker/reports',
      { reports: [{ kind: 'job', id: String(id), state: 'done', exitCode: 0 }] },
      b,
    );
    expect(stolen.body.value!.accepted).toBe(0);
    expect(stolen.body.value!.refused[0]!.reason).toMatch(/not held by u@b/);
    expect(pool.db.job(id!)!.status).toBe('FETCHED');
    const mine = await pool.http<{ accepted: number }>('POST', '/api/worker/reports', { reports: [{ kind: 'job', id: String(id), state: 'done', exitCode: 0 }] }, a);
    expect(mine.body.value!.accepted).toBe(1);
    expect(pool.db.job(id!)!.status).toBe('COMPLETED');
  });

  it('keeps a job claimed by a worker that went away FETCHED, and gives back the claim of a worker that is there but never ran it', { timeout: 150_000 }, async () => {
    box = scratch('tend-claim-stale-');
    pool = await Pool.start(box.dir, { env: { TEND_WORKER_OFFLINE_MS: '1500' } });
    const [gone, here] = [pool.token('u@gone'), pool.token('u@here')];
    const claim = (token: string) => pool!.http<Claimed>('POST', '/api/worker/jobs/claim', { slots: 1 }, token);
    const report = (token: string, id: number, state: string) =>
      pool!.http<{ accepted: number; refused: { reason: string }[] }>('POST', '/api/worker/reports', { reports: [{ kind: 'job', id: String(id), state, exitCode: 0 }] }, token);

    const [a] = await pool.postJobs([{ command: 'true', name: 'a' }]);
    expect((await claim(gone)).body.value!.jobs.map((j) => j.id)).toEqual([a]);
    const [b] = await pool.postJobs([{ command: 'true', name: 'b' }]);
    expect((await claim(here)).body.value!.jobs.map((j) => j.id)).toEqual([b]);
    // u@here keeps polling (online) but never says it launched b; u@gone says nothing at all.
    let polling = true;
    const keepAlive = (async () => {
      while (polling) {
        await pool!.http('GET', '/api/worker/commands?wait=0', undefined, here);
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    try {
      // The lease timeout is 60 s: b's claim returns to the queue then; a's is older, and stays.
      await waitFor(() => pool!.db.events('lease:released').some((e) => e.job_id === b), 100_000, 'the claim on b to be released', 200);
      expect(pool.db.job(b!)!.status).toBe('PENDING');
      expect(pool.db.job(a!)!.status).toBe('FETCHED');
      expect(pool.db.events('lease:released').filter((e) => e.job_id === a)).toEqual([]);

      // u@here had launched b after all (slowly): it says so before anyone else took it: b is its again.
      const late = await report(here, b!, 'running');
      expect(late.body.value!.refused).toEqual([]);
      expect(pool.db.job(b!)!.status).toBe('RUNNING');
      expect(pool.db.job(b!)!.fetched_by).toBe('u@here');
      expect((await report(here, b!, 'done')).body.value!.accepted).toBe(1);
      expect(pool.db.job(b!)!.status).toBe('COMPLETED');
    } finally {
      polling = false;
      await keepAlive;
    }
    // u@gone comes back and reports a: it was running there all along.
    expect((await report(gone, a!, 'running')).body.value!.accepted).toBe(1);
    expect(pool.db.job(a!)!.status).toBe('RUNNING');
    expect((await report(gone, a!, 'done')).body.value!.accepted).toBe(1);
    expect(pool.db.job(a!)!.status).toBe('COMPLETED');
    expect(pool.db.job(a!)!.fetched_by).toBe('u@gone');
  });
});
