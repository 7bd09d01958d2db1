// The repositories' contracts the pass relies on: compare-and-set, ledger and lease semantics,
// deterministic "latest".
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { Store } from '../../../main/engine/store/store.js';

let store: Store;
beforeEach(() => {
  store = Store.open(':memory:');
});
afterEach(() => store.close());

function run(over: Partial<RunRow> & { id: string }): RunRow {
  return {
    routineId: 'me@host:r',
    kind: 'batch',
    cycle: '2026-01-05',
    scheduledAt: 1000,
    attempt: 1,
    status: 'PENDING',
    reason: null,
    exitCode: null,
    signal: null,
    backend: null,
    runDir: null,
    manual: false,
    notBefore: null,
    createdAt: 1000,
    startedAt: null,
    endedAt: null,
    heartbeatAt: null,
    ...over,
  };
}

describe('runs', () => {
  it('compare-and-set moves a run only from an expected state', () => {
    store.runs.insert(run({ id: 'a' }));
    expect(store.runs.cas('a', ['STARTING'], 'RUNNING')).toBe(false);
    expect(store.runs.cas('a', ['PENDING', 'DELAYED'], 'STARTING', { backend: 'local' })).toBe(true);
    expect(store.runs.cas('a', ['PENDING', 'DELAYED'], 'STARTING', { backend: 'other' })).toBe(false);
    expect(store.runs.get('a')).toMatchObject({ status: 'STARTING', backend: 'local' });
  });

  it('latest breaks a tie on created_at by insertion order', () => {
    store.runs.insert(run({ id: 'zzz-first', attempt: 1 }));
    store.runs.insert(run({ id: 'aaa-second', attempt: 2 }));
    expect(store.runs.latest('me@host:r')?.id).toBe('aaa-second');
    expect(store.runs.latestInCycle('me@host:r', '2026-01-05')?.id).toBe('aaa-second');
    expect(store.runs.history('me@host:r', 10).map((r) => r.id)).toEqual(['aaa-second', 'zzz-first']);
    expect(store.runs.activeFor('me@host:r').map((r) => r.id)).toEqual(['zzz-first', 'aaa-second']);
  });

  it('a heartbeat never moves backwards', () => {
    store.runs.insert(run({ id: 'a' }));
    store.runs.recordHeartbeat('a', 50);
    store.runs.recordHeartbeat('a', 40);
    expect(store.runs.get('a')?.heartbeatAt).toBe(50);
  });
});

describe('ledger and leases', () => {
  it('one ledger row per item; clearing twice reports the second as a no-op', () => {
    store.ledger.record('run', 'a', 'local', { id: 'a', pid: 12, start: 'x' }, 5);
    expect(() => store.ledger.record('run', 'a', 'local', { id: 'a' }, 6)).toThrow(/UNIQUE/);
    expect(store.ledger.get('run', 'a')).toMatchObject({ handle: { id: 'a', pid: 12, start: 'x' }, submittedAt: 5 });
    expect(store.ledger.clear('run', 'a')).toBe(true);
    expect(store.ledger.clear('run', 'a')).toBe(false);
  });

  it('keys lists what is in the ledger in submission order, without handles', () => {
    store.ledger.record('run', 'b', 'local', { id: 'b' }, 5);
    store.ledger.record('job', '7', 'pool:w@h', { id: 'job-7' }, 6);
    store.ledger.record('run', 'a', 'local', { id: 'a' }, 7);
    expect(store.ledger.keys()).toEqual([
      { kind: 'run', refId: 'b' },
      { kind: 'job', refId: '7' },
      { kind: 'run', refId: 'a' },
    ]);
    expect(store.ledger.keys()).toEqual(store.ledger.all().map((e) => ({ kind: e.kind, refId: e.refId })));
  });

  it('a claim is taken once; stale leases exclude items owned by a ledger entry', () => {
    expect(store.ledger.claim('run', 'a', 'p1', 10)).toBe(true);
    expect(store.ledger.claim('run', 'a', 'p2', 11)).toBe(false);
    store.ledger.claim('job', '7', 'p1', 10);
    store.ledger.record('job', '7', 'local', { id: 'job-7' }, 12);
    store.ledger.claim('run', 'fresh', 'p1', 100);
    expect(store.ledger.staleLeases(50).map((l) => `${l.queue}:${l.itemId}`)).toEqual(['run:a']);
  });
});

describe('jobs', () => {
  it('a worker may claim PENDING jobs unaddressed or addressed to it, never a job whose backend was chosen at post', () => {
    const post = (name: string, over: { computer?: string | null; backend?: string | null; status?: 'PENDING' | 'WAITING' } = {}) =>
      store.jobs.insert({ name, command: 'true', args: [], cwd: null, env: {}, computer: over.computer ?? null, dependencies: [], backend: over.backend ?? null, slurm: over.backend === 'slurm' ? {} : null }, over.status ?? 'PENDING', 1);
    const anyone = post('anyone');
    post('other', { computer: 'u@other' });
    post('cluster', { computer: 'u@me', backend: 'slurm' });
    const mine = post('mine', { computer: 'u@me' });
    post('later', { status: 'WAITING' });
    post('here', { backend: 'local' });
    const released = post('released', { backend: 'pool:u@gone' }); // its claim went stale: anyone's again
    const last = post('last');
    expect(store.jobs.claimable('u@me', 10).map((j) => j.name)).toEqual(['anyone', 'mine', 'released', 'last']);
    expect(store.jobs.claimable('u@me', 2).map((j) => j.id)).toEqual([anyone, mine]);
    expect(store.jobs.claimable('u@other', 10).map((j) => j.name)).toEqual(['anyone', 'other', 'released', 'last']);
    expect(released).toBeLessThan(last);
    expect(last).toBeGreaterThan(mine);
  });
});
