// The metrics' totals (store/totals.ts) count each run once, as the transaction that finishes it
// commits: the runs a transaction finished are counted together as it ends — several of one
// routine in one statement too — and a part of it that rolls back counts nothing.
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { finishedAs } from '../../../main/engine/store/runs.js';
import { Store } from '../../../main/engine/store/store.js';

let store: Store;
beforeEach(() => {
  store = Store.open(':memory:');
});
afterEach(() => store.close());

function started(id: string, routineId: string, startedAt: number): void {
  const run: RunRow = {
    id,
    routineId,
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
  };
  store.runs.insert(run);
  store.runs.cas(id, ['PENDING'], 'RUNNING', { startedAt });
}

const tally = () => store.history.runTotals().map((t) => [t.routineId, t.status, t.n, t.lastEndedAt]);

it('counts every run a transaction finished, several of one routine included, with its clamped end', () => {
  for (let i = 0; i < 70; i++) started(`a${i}`, 'me@host:a', 10_000);
  started('b1', 'me@host:b', 10_000);
  started('b2', 'me@host:b', 10_000);
  store.tx(() => {
    for (let i = 0; i < 70; i++) store.runs.cas(`a${i}`, ['RUNNING'], 'COMPLETED', { endedAt: 10_000 + i * 1000 });
    store.runs.cas('b1', ['RUNNING'], 'ERROR', { endedAt: 12_000 });
    // An end before the start is stored (and counted) as the start.
    store.runs.cas('b2', ['RUNNING'], 'COMPLETED', { endedAt: 9_000 });
    expect(tally()).toEqual([]);
  });
  expect(tally()).toEqual([
    ['me@host:a', 'COMPLETED', 70, 79_000],
    ['me@host:b', 'COMPLETED', 1, 10_000],
    ['me@host:b', 'ERROR', 1, null],
  ]);
  const durations = new Map(store.history.durationTotals().map((d) => [d.routineId, d]));
  // 0 s to 69 s: bucket ≤1 s holds 0 and 1, ≤5 s 2..5, ≤15 s 6..15, ≤30 s 16..30, ≤60 s 31..60, ≤120 s the rest.
  expect(durations.get('me@host:a')).toMatchObject({ n: 70, sum: (69 * 70) / 2, buckets: [2, 4, 10, 15, 30, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0] });
  expect(durations.get('me@host:b')).toMatchObject({ n: 2, sum: 2, buckets: [1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] });
});

it('a finish that rolls back is not counted; one outside a transaction is counted at once', () => {
  started('a', 'me@host:a', 10_000);
  started('b', 'me@host:a', 10_000);
  store.tx(() => {
    expect(() =>
      store.tx(() => {
        store.runs.cas('a', ['RUNNING'], 'COMPLETED', { endedAt: 11_000 });
        throw new Error('inner fails');
      }),
    ).toThrow('inner fails');
  });
  expect(store.runs.status('a')).toBe('RUNNING');
  expect(tally()).toEqual([]);
  store.runs.cas('b', ['RUNNING'], 'COMPLETED', { endedAt: 11_000 });
  expect(tally()).toEqual([['me@host:a', 'COMPLETED', 1, 11_000]]);
  // Moving a finished run again (CANCELLED keeping how it ended) counts nothing more.
  expect(store.runs.cas('b', ['COMPLETED'], 'COMPLETED', { exitCode: 0 })).toBe(true);
  expect(tally()).toEqual([['me@host:a', 'COMPLETED', 1, 11_000]]);
});

it('a finish counted from the run as read in its transaction counts what the row reads back once moved', () => {
  // finishedAs mirrors the move's SQL (the end never before the start): every shape of a finishing patch, against the row.
  const starts = [null, 5000, 9000];
  const patched: (number | null | undefined)[] = [undefined, null, 2000, 7000];
  const ends: (number | null)[] = [null, 3000, 6000, 8000];
  let n = 0;
  for (const old of starts)
    for (const startedAt of patched)
      for (const endedAt of ends) {
        const id = `r${n++}`;
        store.runs.insert({ ...baseRun(id), status: 'RUNNING' });
        if (old !== null) store.db.prepare(`UPDATE runs SET started_at = ? WHERE id = ?`).run(old, id);
        const read = store.runs.get(id)!;
        const patch = { endedAt, ...(startedAt === undefined ? {} : { startedAt }), exitCode: 0 };
        store.tx(() => expect(store.runs.cas(id, ['RUNNING'], 'COMPLETED', patch, read)).toBe(true));
        const row = store.db.prepare(`SELECT routine_id, kind, status, created_at, started_at, ended_at FROM runs WHERE id = ?`).get(id);
        expect(finishedAs(read, 'COMPLETED', patch)).toEqual(row);
      }
  // Counted once each, with the end the row has.
  expect(store.history.runTotals().map((t) => t.n)).toEqual([n]);
});

function baseRun(id: string): RunRow {
  return { id, routineId: 'me@host:r', kind: 'batch', cycle: '2026-01-05', scheduledAt: 1000, attempt: 1, status: 'PENDING', reason: null, exitCode: null, signal: null, backend: null, runDir: null, manual: false, notBefore: null, createdAt: 1000, startedAt: null, endedAt: null, heartbeatAt: null };
}
