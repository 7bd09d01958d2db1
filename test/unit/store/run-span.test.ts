// A run never ends before it starts. Its start comes from /proc tick times, its end from the
// backend's outcome or Date.now: sources that disagree by milliseconds. The store keeps the end at
// or after the start whatever a move patches, and reads older rows the same way.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runSummary } from '../../../main/engine/ops/views.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, T0 } from '../../helpers/engine-fixture.js';

let store: Store;
beforeEach(() => {
  store = Store.open(':memory:');
});
afterEach(() => store.close());

function insert(id: string): void {
  store.runs.insert({ id, routineId: 'me@host:r', kind: 'batch', cycle: 'c', scheduledAt: 0, attempt: 1, status: 'RUNNING', reason: null, exitCode: null, signal: null, backend: 'local', runDir: null, manual: false, notBefore: null, createdAt: 0, startedAt: null, endedAt: null, heartbeatAt: null });
}

it('an end patched earlier than the stored start is kept at the start', () => {
  insert('a');
  store.runs.cas('a', ['RUNNING'], 'RUNNING', { startedAt: 10_001_212_576 });
  store.runs.cas('a', ['RUNNING'], 'COMPLETED', { endedAt: 10_001_212_571, exitCode: 0 });
  const r = store.runs.get('a')!;
  expect(r.endedAt).toBe(10_001_212_576);
  expect(runSummary(r).durationMs).toBe(0);
});

it('start and end patched together, the end earlier: the end is the start', () => {
  insert('b');
  store.runs.cas('b', ['RUNNING'], 'ERROR', { startedAt: 500, endedAt: 495 });
  expect(store.runs.get('b')).toMatchObject({ startedAt: 500, endedAt: 500 });
});

it('a start patched after an earlier end (stopped by hand before it was seen running) is kept at the end', () => {
  insert('c');
  store.runs.cas('c', ['RUNNING'], 'CANCELLED', { endedAt: 700 });
  store.runs.cas('c', ['CANCELLED'], 'CANCELLED', { startedAt: 705 });
  expect(store.runs.get('c')).toMatchObject({ startedAt: 700, endedAt: 700 });
});

it('an end without any start, and clearing, still work', () => {
  insert('d');
  store.runs.cas('d', ['RUNNING'], 'ERROR', { endedAt: 42 });
  expect(store.runs.get('d')!.endedAt).toBe(42);
  store.runs.cas('d', ['ERROR'], 'ERROR', { endedAt: null });
  expect(store.runs.get('d')!.endedAt).toBeNull();
});

it('a row written before the clamp reads with its end at its start', () => {
  insert('e');
  store.db.prepare(`UPDATE runs SET status = 'COMPLETED', started_at = 1000, ended_at = 995 WHERE id = 'e'`).run();
  expect(store.runs.get('e')!.endedAt).toBe(1000);
});

it('through the pass: an outcome that ends 5 ms before the observed start settles with duration 0', async () => {
  const f = new Fixture();
  try {
    f.define({ id: 'quick', in: '1m' });
    f.clock.set(T0 + 60_000);
    await f.pass();
    const run = f.latest('quick');
    f.store.runs.cas(run.id, ['STARTING'], 'RUNNING', { startedAt: T0 + 60_010 });
    f.backend.finish(run.id, { exitCode: 0, endedAt: T0 + 60_005 });
    await f.pass();
    const done = f.run(run.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.endedAt! - done.startedAt!).toBeGreaterThanOrEqual(0);
  } finally {
    f.store.close();
  }
});
