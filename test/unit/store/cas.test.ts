// Compare-and-set (store/cas.ts) on a real SQLite store: a status changes only from a state the
// mover expected, the patch lands in its columns and nowhere else, and each shape of move gets
// the statement of its own shape.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { saveRoutine } from '../../../main/engine/ops/routines.js';
import type { ArmedTrigger } from '../../../main/engine/store/routines.js';
import { Store } from '../../../main/engine/store/store.js';

let store: Store;
beforeEach(() => {
  store = Store.open(':memory:');
});
afterEach(() => store.close());

function run(id: string, status: RunRow['status'] = 'PENDING'): RunRow {
  return {
    id,
    routineId: 'me@host:r',
    kind: 'batch',
    cycle: '2026-01-05',
    scheduledAt: 1000,
    attempt: 1,
    status,
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
  };
}

function job(status: 'PENDING' | 'WAITING' = 'PENDING', now = 1000): number {
  return store.jobs.insert({ name: 'j', command: 'true', args: [], cwd: null, env: {}, computer: null, dependencies: [] }, status, now);
}

const updatedAt = (id: number): number => store.db.prepare('SELECT updated_at FROM jobs WHERE id = ?').pluck().get(id) as number;

describe('compare-and-set of a run', () => {
  it('moves from any of the expected states, and only the row named', () => {
    store.runs.insert(run('a', 'DELAYED'));
    store.runs.insert(run('b', 'DELAYED'));
    expect(store.runs.cas('a', ['PENDING', 'DELAYED'], 'STARTING')).toBe(true);
    expect(store.runs.get('a')!.status).toBe('STARTING');
    expect(store.runs.get('b')!.status).toBe('DELAYED');
  });

  it('refuses, changing nothing, when the run is in none of them or does not exist', () => {
    store.runs.insert(run('a', 'RUNNING'));
    expect(store.runs.cas('a', ['PENDING', 'DELAYED', 'STARTING'], 'ERROR', { reason: 'late' })).toBe(false);
    expect(store.runs.get('a')).toMatchObject({ status: 'RUNNING', reason: null });
    expect(store.runs.cas('nope', ['RUNNING'], 'COMPLETED')).toBe(false);
  });

  it('writes every patched field to its column and leaves fields given as undefined alone', () => {
    store.runs.insert({ ...run('a', 'RUNNING'), reason: 'kept', backend: 'local' });
    const patch = { exitCode: 3, signal: 'SIGTERM', runDir: '/d', startedAt: 5, endedAt: 9, heartbeatAt: 7, reason: undefined, backend: undefined };
    expect(store.runs.cas('a', ['RUNNING'], 'ERROR', patch)).toBe(true);
    expect(store.runs.get('a')).toMatchObject({ status: 'ERROR', exitCode: 3, signal: 'SIGTERM', runDir: '/d', startedAt: 5, endedAt: 9, heartbeatAt: 7, reason: 'kept', backend: 'local' });
  });

  it('null clears a field', () => {
    store.runs.insert({ ...run('a', 'RUNNING'), reason: 'old' });
    expect(store.runs.cas('a', ['RUNNING'], 'RUNNING', { reason: null })).toBe(true);
    expect(store.runs.get('a')!.reason).toBeNull();
  });

  it('moves of different shapes do not share a statement', () => {
    for (const id of ['a', 'b', 'c', 'd']) store.runs.insert(run(id, 'RUNNING'));
    expect(store.runs.cas('a', ['RUNNING'], 'ERROR', { reason: 'r' })).toBe(true);
    expect(store.runs.cas('b', ['RUNNING'], 'ERROR', { exitCode: 2 })).toBe(true);
    expect(store.runs.cas('c', ['RUNNING'], 'ERROR', { exitCode: 4, reason: 'both' })).toBe(true);
    expect(store.runs.cas('d', ['PENDING', 'RUNNING'], 'COMPLETED', { exitCode: 0 })).toBe(true);
    expect(['a', 'b', 'c', 'd'].map((id) => store.runs.get(id)).map((r) => [r!.status, r!.reason, r!.exitCode])).toEqual([
      ['ERROR', 'r', null],
      ['ERROR', null, 2],
      ['ERROR', 'both', 4],
      ['COMPLETED', null, 0],
    ]);
  });

  it('the same move again uses the same statement with the new values', () => {
    store.runs.insert(run('a', 'RUNNING'));
    store.runs.insert(run('b', 'RUNNING'));
    store.runs.cas('a', ['RUNNING'], 'ERROR', { exitCode: 1 });
    store.runs.cas('b', ['RUNNING'], 'COMPLETED', { exitCode: 0 });
    expect([store.runs.get('a'), store.runs.get('b')].map((r) => [r!.status, r!.exitCode])).toEqual([
      ['ERROR', 1],
      ['COMPLETED', 0],
    ]);
  });
});

describe('compare-and-set: the span and the statements', () => {
  it('a field other than the start, patched on a run that has ended, is written as given', () => {
    store.runs.insert(run('a', 'RUNNING'));
    expect(store.runs.cas('a', ['RUNNING'], 'RUNNING', { startedAt: 5, endedAt: 9 })).toBe(true);
    expect(store.runs.cas('a', ['RUNNING'], 'RUNNING', { reason: 'late report', exitCode: 20 })).toBe(true);
    expect(store.runs.get('a')).toMatchObject({ reason: 'late report', exitCode: 20, startedAt: 5, endedAt: 9 });
  });

  it('the stored span never runs backwards: an end before the start is stored at the start, a later start alone at the end', () => {
    const span = (id: string) => store.db.prepare('SELECT started_at AS s, ended_at AS e FROM runs WHERE id = ?').get(id);
    for (const id of ['a', 'b', 'c']) store.runs.insert(run(id, 'RUNNING'));
    store.runs.cas('a', ['RUNNING'], 'RUNNING', { startedAt: 10 });
    store.runs.cas('a', ['RUNNING'], 'RUNNING', { endedAt: 7 });
    expect(span('a')).toEqual({ s: 10, e: 10 });
    store.runs.cas('b', ['RUNNING'], 'RUNNING', { startedAt: 10, endedAt: 7 });
    expect(span('b')).toEqual({ s: 10, e: 10 });
    store.runs.cas('c', ['RUNNING'], 'RUNNING', { endedAt: 7 });
    store.runs.cas('c', ['RUNNING'], 'RUNNING', { startedAt: 10 });
    expect(span('c')).toEqual({ s: 7, e: 7 });
  });

  it('the same shape of move prepares its statement once; a field given as undefined makes no new shape', () => {
    for (const id of ['a', 'b', 'c']) store.runs.insert(run(id, 'RUNNING'));
    const prepare = store.db.prepare.bind(store.db);
    let prepared = 0;
    store.db.prepare = ((sql: string) => {
      prepared++;
      return prepare(sql);
    }) as typeof store.db.prepare;
    // Moves that finish nothing (a finish also counts the run in the day's totals).
    store.runs.cas('a', ['RUNNING'], 'RUNNING', { exitCode: 1 });
    expect(prepared).toBe(1);
    store.runs.cas('b', ['RUNNING'], 'STARTING', { exitCode: 0 });
    store.runs.cas('c', ['RUNNING'], 'RUNNING', { exitCode: 2, reason: undefined });
    expect(prepared).toBe(1);
    expect(['a', 'b', 'c'].map((id) => store.runs.get(id)!.exitCode)).toEqual([1, 0, 2]);
  });

  it('a move from more expected states than usual (nine) binds every one of them', () => {
    store.runs.insert(run('a', 'RUNNING'));
    const nine = ['PENDING', 'DELAYED', 'STARTING', 'COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED', 'RUNNING'] as const;
    expect(store.runs.cas('a', nine, 'ERROR')).toBe(true);
    expect(store.runs.get('a')!.status).toBe('ERROR');
  });
});

describe('compare-and-set of a job', () => {
  it('moves from an expected state, patches and stamps the time of the move', () => {
    const id = job('PENDING', 1000);
    expect(store.jobs.cas(id, ['PENDING'], 'FETCHED', { fetchedBy: 'w@h', backend: 'pool:w@h' }, 2000)).toBe(true);
    expect(store.jobs.get(id)).toMatchObject({ status: 'FETCHED', backend: 'pool:w@h' });
    expect(store.db.prepare('SELECT fetched_by FROM jobs WHERE id = ?').pluck().get(id)).toBe('w@h');
    expect(updatedAt(id)).toBe(2000);
  });

  it('refuses from any other state and leaves the row, its time included, as it was', () => {
    const id = job('WAITING', 1000);
    expect(store.jobs.cas(id, ['PENDING', 'FETCHED'], 'RUNNING', { startedAt: 5 }, 3000)).toBe(false);
    expect(store.jobs.get(id)).toMatchObject({ status: 'WAITING', startedAt: null });
    expect(updatedAt(id)).toBe(1000);
    const other = job('PENDING', 1000);
    expect(store.jobs.cas(id, ['WAITING'], 'PENDING', {}, 4000)).toBe(true);
    expect(store.jobs.status(other)).toBe('PENDING');
    expect(updatedAt(other)).toBe(1000);
  });
});

describe('compare-and-set of a trigger', () => {
  const trigger = (state: ArmedTrigger['state']): ArmedTrigger => ({
    routineId: 'me@host:r',
    state,
    nextRunAt: 5000,
    firstDueAt: null,
    lastFiredAt: null,
    attempts: 0,
    lastError: null,
    lastErrorAt: null,
    failCount: 0,
  });
  // A trigger belongs to a routine (a foreign key): define one, then set its trigger as the test needs.
  beforeEach(() => {
    saveRoutine(store, { id: 'me@host:r', command: 'true', cron: '0 * * * *', tz: 'UTC' }, { now: 500, localComputer: 'me@host' });
  });
  const triggerWrittenAt = (): number => store.db.prepare(`SELECT updated_at FROM triggers WHERE routine_id = 'me@host:r'`).pluck().get() as number;

  it('moves by routine id from an expected state, patches, and stamps the time of the move', () => {
    store.routines.saveTrigger(trigger('scheduled'), 1000);
    expect(store.routines.casTrigger('me@host:r', ['scheduled'], 'failed', { lastError: 'exit 1', failCount: 1, nextRunAt: null }, 2000)).toBe(true);
    expect(store.routines.trigger('me@host:r')).toMatchObject({ state: 'failed', lastError: 'exit 1', failCount: 1, nextRunAt: null, attempts: 0 });
    expect(triggerWrittenAt()).toBe(2000);
  });

  it('refuses from any other state, or without a row, and changes nothing', () => {
    store.routines.saveTrigger(trigger('paused'), 1000);
    expect(store.routines.casTrigger('me@host:r', ['scheduled'], 'scheduled', { nextRunAt: 9000 }, 2000)).toBe(false);
    expect(store.routines.trigger('me@host:r')).toEqual(trigger('paused'));
    expect(triggerWrittenAt()).toBe(1000);
    expect(store.routines.casTrigger('me@host:nope', ['scheduled'], 'paused', {}, 2000)).toBe(false);
    expect(store.routines.trigger('me@host:nope')).toBeNull();
  });
});
