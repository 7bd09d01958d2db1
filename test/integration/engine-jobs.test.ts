// One-off batch jobs through a real Engine: a 200-job dependency graph with fan-out and fan-in
// completes in dependency order at max_parallel 8 (each job stamps its start and end into a marker
// file), and a job whose dependency fails is CANCEL with a reason naming that dependency.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobRow } from '../../main/engine/domain/types.js';
import { waitFor } from '../helpers/wait.js';
import { EngineHarness, FIX, SHARED_FIX, epochMs, jobDirs, lines } from '../helpers/engine-harness.js';

let h: EngineHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const DONE = new Set(['COMPLETED', 'ERROR', 'CANCEL']);

/** start/end instants per job key from stamp.sh lines. */
function stamps(file: string): { start: Map<string, number[]>; end: Map<string, number[]> } {
  const start = new Map<string, number[]>();
  const end = new Map<string, number[]>();
  for (const l of lines(file)) {
    const [kind, key, t] = l.split(' ');
    const m = kind === 'start' ? start : end;
    m.set(key!, [...(m.get(key!) ?? []), epochMs(t!)]);
  }
  return { start, end };
}

describe('a 200-job dependency graph', () => {
  it('completes in dependency order, never more than max_parallel 8 at once, each job once', async () => {
    h = new EngineHarness({ intervalMs: 200, maxParallel: 8 });
    const marker = join(h.dir, 'marker');
    // Layers: 1 → 30 (fan-out) → 5 (fan-in: each waits for 6 of the 30) → 60 (fan-out) → 4 (fan-in over
    // 15 each) → 99 (each after one of the 4 and the root) → 1 (fan-in over the 99) = 200 jobs.
    const sizes = [1, 30, 5, 60, 4, 99, 1];
    expect(sizes.reduce((a, b) => a + b)).toBe(200);
    const layers: JobRow[][] = [];
    const deps = new Map<number, number[]>();
    const key = new Map<number, string>();
    h.store.tx(() => {
      sizes.forEach((n, L) => {
        const layer: JobRow[] = [];
        for (let i = 0; i < n; i++) {
          const prev = layers[L - 1] ?? [];
          let after: number[] = [];
          if (L === 0) after = [];
          else if (prev.length === 1) after = [prev[0]!.id];
          else if (n < prev.length) after = prev.filter((_, k) => k % n === i).map((j) => j.id); // fan-in
          else after = [prev[i % prev.length]!.id, ...(L === 5 ? [layers[0]![0]!.id] : [])]; // fan-out
          const k = `${L}.${i}`;
          const job = h!.post({ name: `dag ${k}`, command: FIX('stamp.sh'), args: [marker, k, '0.03', '0'], after });
          layer.push(job);
          deps.set(job.id, after);
          key.set(job.id, k);
        }
        layers.push(layer);
      });
    });
    const all = layers.flat();
    expect(all).toHaveLength(200);
    expect(all.filter((j) => j.status === 'PENDING').map((j) => j.id)).toEqual([layers[0]![0]!.id]);

    await waitFor(() => h!.store.jobs.list(1000).every((j) => DONE.has(j.status)), 120_000, 'all 200 jobs to finish');
    const rows = h.store.jobs.list(1000);
    expect(rows.filter((j) => j.status !== 'COMPLETED').map((j) => `${j.id} ${j.status} ${j.reason}`)).toEqual([]);

    const { start, end } = stamps(marker);
    for (const j of all) {
      const k = key.get(j.id)!;
      expect(start.get(k), `starts of ${k}`).toHaveLength(1);
      expect(end.get(k), `ends of ${k}`).toHaveLength(1);
      for (const d of deps.get(j.id)!) {
        const dk = key.get(d)!;
        // The job's process began after every dependency's process had ended.
        expect(start.get(k)![0]!, `${k} started before its dependency ${dk} ended`).toBeGreaterThanOrEqual(end.get(dk)![0]!);
      }
    }
    // At most 8 processes at once (from the jobs' own stamps), and the slots were really used.
    const edges: [number, number][] = [...[...start.values()].map((t): [number, number] => [t[0]!, 1]), ...[...end.values()].map((t): [number, number] => [t[0]!, -1])];
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let now = 0;
    let peak = 0;
    for (const [, d] of edges) peak = Math.max(peak, (now += d));
    expect(peak).toBeLessThanOrEqual(8);
    expect(peak).toBeGreaterThan(1);
    // One job directory per job.
    expect(jobDirs(h.dir)).toHaveLength(200);
  }, 180_000);
});

describe('failed dependencies', () => {
  it('a job whose dependency fails is CANCEL naming it, downstream too; independent branches still run', async () => {
    h = new EngineHarness({ intervalMs: 200 });
    const marker = join(h.dir, 'marker');
    const stamp = (k: string, code = 0) => ({ command: FIX('stamp.sh'), args: [marker, k, '0.02', String(code)] });
    const ok = h.post({ name: 'ok', ...stamp('ok') });
    const bad = h.post({ name: 'bad', ...stamp('bad', 3) });
    const child = h.post({ name: 'child', ...stamp('child'), after: [bad.id] });
    const both = h.post({ name: 'both', ...stamp('both'), after: [ok.id, bad.id] });
    const grandchild = h.post({ name: 'grandchild', ...stamp('grandchild'), after: [child.id] });
    const fine = h.post({ name: 'fine', ...stamp('fine'), after: [ok.id] });

    await waitFor(() => [ok, bad, child, both, grandchild, fine].every((j) => DONE.has(h!.job(j.id).status)), 30_000, 'every job to end');
    expect(h.job(ok.id).status).toBe('COMPLETED');
    expect(h.job(bad.id)).toMatchObject({ status: 'ERROR', exitCode: 3, reason: 'exit 3' });
    expect(h.job(child.id)).toMatchObject({ status: 'CANCEL', reason: `dependency job ${bad.id} ended ERROR` });
    expect(h.job(both.id)).toMatchObject({ status: 'CANCEL', reason: `dependency job ${bad.id} ended ERROR` });
    expect(h.job(grandchild.id)).toMatchObject({ status: 'CANCEL', reason: `dependency job ${child.id} ended CANCEL` });
    expect(h.job(fine.id).status).toBe('COMPLETED');
    // The cancelled ones never ran.
    const { start } = stamps(marker);
    expect([...start.keys()].sort()).toEqual(['bad', 'fine', 'ok']);
    expect(h.eventsOf('job:cancelled').map((e) => e.jobId).sort()).toEqual([child.id, both.id, grandchild.id].sort());

    // Posted after its dependency already failed: CANCEL at once.
    const late = h.post({ name: 'late', ...stamp('late'), after: [bad.id] });
    expect(late.status).toBe('CANCEL');
    expect(late.reason).toBe(`dependency job ${bad.id} ended ERROR`);
  });

  it('a job waiting on itself, an unknown id or a cycle is refused at post', () => {
    h = new EngineHarness({ start: false });
    const a = h.post({ command: '/bin/true' });
    expect(() => h!.post({ command: '/bin/true', after: [a.id + 1000] })).toThrow(/unknown job/);
    // A new job cannot be waited on yet, so it can neither wait on itself nor close a cycle.
    expect(() => h!.post({ command: '/bin/true', after: [a.id + 1] })).toThrow(/unknown job/);
    expect(h.store.jobs.list(10)).toHaveLength(1);
  });
});

describe('launches in flight', () => {
  it('do not hold up the pass, and stopping the engine waits until each is recorded in the ledger', async () => {
    h = new EngineHarness({ start: false, maxParallel: 8 });
    const jobs = Array.from({ length: 8 }, () => h!.post({ command: SHARED_FIX('hang.sh') }));
    let inFlightAtPassEnd = -1;
    h.engine.bus.once('pass', () => (inFlightAtPassEnd = h!.engine.scheduler.ctx.launches.launching.size));
    h.engine.start();
    await waitFor(() => inFlightAtPassEnd >= 0, 15_000, 'the first pass');
    // The pass that claimed them ended while their wrappers were still starting.
    expect(inFlightAtPassEnd).toBe(8);
    await h.engine.stop();
    expect(h.engine.scheduler.ctx.launches.launching.size).toBe(0);
    const ledger = h.store.ledger.all();
    expect(ledger.map((e) => Number(e.refId)).sort((a, b) => a - b)).toEqual(jobs.map((j) => j.id));
    expect(h.store.ledger.staleLeases(Number.MAX_SAFE_INTEGER)).toEqual([]);
    for (const j of jobs) expect(['FETCHED', 'RUNNING']).toContain(h.job(j.id).status);
  });
});
