// @vitest-environment node
// The renderer's store without React: engine events re-read only what they touch.
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../contract/calls.js';
import { createTendStore } from '../../../renderer/src/store/store.js';
import { detail, event, FakeClient, summary, tick } from './fake-client.js';

const A = 'me@box:reports/a';
const B = 'me@box:reports/b';

function run(id: string, status: RunSummary['status']): RunSummary {
  return { id, status, attempt: 1, scheduledAt: new Date().toISOString(), startedAt: null, endedAt: null, durationMs: null, exitCode: null, signal: null, reason: null, heartbeatAt: null, manual: true, runDir: null };
}

function setup(routines = [summary(A), summary(B)]) {
  const c = new FakeClient();
  const byId = new Map(routines.map((r) => [r.id, r]));
  c.handle('routines.list', () => ({ ok: true, value: [...byId.values()] }));
  c.handle('schedules.list', () => ({ ok: true, value: [{ name: 'default', mode: 'active', maxParallel: null }] }));
  c.handle('routines.show', ({ id }) => {
    const r = byId.get(id);
    return r ? { ok: true, value: detail(r) } : { ok: false, error: { code: 'NOT_FOUND', message: `routine ${id} not found` } };
  });
  const store = createTendStore(c, { debounceMs: 1 });
  return { c, store, byId };
}

describe('renderer store', () => {
  it('a run event re-reads only its routine, once for a burst, and updates it in the list', async () => {
    const { c, store, byId } = setup();
    store.getState().watch('routines');
    await tick();
    expect(store.getState().routines.map((r) => r.id)).toEqual([A, B]);
    c.reset();
    byId.set(A, summary(A, { today: 'RUNNING' }));
    c.push('event', event('run:submitted', { routineId: A }));
    c.push('event', event('run:running', { routineId: A }));
    await tick(20);
    expect(c.count('routines.show')).toBe(1);
    expect(c.count('routines.list')).toBe(0);
    expect(store.getState().routines[0]!.today).toBe('RUNNING');
    expect(store.getState().routines[1]).toBe(store.getState().routines[1]); // B untouched
  });

  it('many routines changing at once re-read the list instead of each one', async () => {
    const many = Array.from({ length: 60 }, (_, i) => summary(`me@box:r/${i}`));
    const { c, store } = setup(many);
    store.getState().watch('routines');
    await tick();
    c.reset();
    for (const r of many) c.push('event', event('run:completed', { routineId: r.id }));
    await tick(20);
    expect(c.count('routines.list')).toBe(1);
    expect(c.count('routines.show')).toBe(0);
  });

  it('a removed routine leaves the list without a request; a created one is read and added', async () => {
    const { c, store, byId } = setup();
    store.getState().watch('routines');
    await tick();
    c.reset();
    c.push('event', event('routine:removed', { routineId: B }));
    await tick(20);
    expect(store.getState().routines.map((r) => r.id)).toEqual([A]);
    expect(c.calls).toEqual([]);
    const C = 'me@box:reports/c';
    byId.set(C, summary(C));
    c.push('event', event('routine:created', { routineId: C }));
    await tick(20);
    expect(store.getState().routines.map((r) => r.id)).toEqual([A, C]);
    expect(store.getState().routineIndex.get(C)).toBe(1);
  });

  it('nothing is fetched for data no page watches; it is re-read when watched again', async () => {
    const { c, store } = setup();
    const off = store.getState().watch('routines');
    await tick();
    off();
    c.reset();
    c.push('event', event('run:failed', { routineId: A }));
    await tick(20);
    expect(c.calls).toEqual([]);
    store.getState().watch('routines');
    await tick();
    expect(c.count('routines.list')).toBe(1);
  });

  it('Restart shows busy, then its result with the run it started, and re-reads the routine', async () => {
    const { c, store } = setup();
    let release!: () => void;
    c.handle('routines.restart', () => new Promise((r) => (release = () => r({ ok: true, value: { stopped: [], started: run('r-1', 'PENDING') } }))));
    const done = store.getState().act(A, 'restart');
    await tick();
    expect(store.getState().actions[A]).toMatchObject({ op: 'restart', phase: 'busy' });
    release();
    expect(await done).toBe(true);
    expect(store.getState().actions[A]).toMatchObject({ phase: 'done', runId: 'r-1', message: 'Started r-1' });
    expect(c.count('routines.show')).toBe(1);
  });

  it('a refused action keeps the server’s message as its result', async () => {
    const { c, store } = setup();
    c.handle('routines.run', () => ({ ok: false, error: { code: 'CONFLICT', message: `${A} is already RUNNING (use restart)` } }));
    expect(await store.getState().act(A, 'run')).toBe(false);
    expect(store.getState().actions[A]).toMatchObject({ phase: 'error', message: `${A} is already RUNNING (use restart)` });
  });

  it('job events re-read that job only and insert new ones', async () => {
    const { c, store } = setup();
    const job = (id: number, status: 'WAITING' | 'RUNNING') => ({ id, name: `j${id}`, command: 'true', args: [], cwd: null, env: {}, computer: null, status, reason: null, exitCode: null, signal: null, runDir: null, backend: null, dependencies: [], createdAt: 0, startedAt: null, endedAt: null });
    c.handle('jobs.list', () => ({ ok: true, value: [job(1, 'WAITING')] }));
    c.handle('jobs.show', ({ id }) => ({ ok: true, value: job(Number(id), 'RUNNING') }));
    store.getState().watch('jobs');
    await tick();
    c.reset();
    c.push('event', event('job:running', { jobId: 1 }));
    c.push('event', event('job:posted', { jobId: 2 }));
    await tick(20);
    expect(c.count('jobs.show')).toBe(2);
    expect(c.count('jobs.list')).toBe(0);
    expect(store.getState().jobs.map((j) => [j.id, j.status]).sort()).toEqual([[1, 'RUNNING'], [2, 'RUNNING']]);
  });

  it('the same event twice (a replay after reconnecting) is applied once', async () => {
    const { c, store } = setup();
    store.getState().watch('routines');
    await tick();
    c.reset();
    const e = event('run:completed', { routineId: A });
    c.push('event', e);
    await tick(20);
    c.push('event', e);
    await tick(20);
    expect(c.count('routines.show')).toBe(1);
    expect(store.getState().recent.filter((r) => r.id === e.id)).toHaveLength(1);
  });
});
