// The retention's sweep runs between passes a slice (one short transaction) at a time, in the
// engine's own loop: a pass asked for while a sweep goes on runs before the sweep's next slice, and
// a stop ends the loop after the slice under way. Order is read from what happened, not from time.
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../main/engine/clock.js';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import { DAY_MS } from '../../main/engine/keep-days.js';
import { Store } from '../../main/engine/store/store.js';
import { COMPUTER, scratch } from '../helpers/engine-fixture.js';
import { TestBackend } from '../helpers/test-backend.js';
import { waitFor } from '../helpers/wait.js';

const NOW = Date.UTC(2026, 5, 1, 12, 0, 0);
const OLD = NOW - 40 * DAY_MS;

let box: ReturnType<typeof scratch>;
let store: Store;
let engine: Engine;
const seen: string[] = [];

beforeEach(() => {
  box = scratch('tend-retention-slices-');
  store = Store.open(join(box.dir, 'tend.db'));
  store.tx(() => {
    for (let i = 0; i < 21; i++) {
      const at = OLD + i * 60_000;
      store.runs.insert({
        id: `old-${i}`, routineId: 'me@host:old', kind: 'batch', cycle: new Date(at).toISOString().slice(0, 10), scheduledAt: at, attempt: 1, status: 'COMPLETED', reason: null,
        exitCode: 0, signal: null, backend: 'local', runDir: null, manual: false, notBefore: null, createdAt: at, startedAt: at, endedAt: at + 1000, heartbeatAt: null,
      });
    }
  });
  const clock = new ManualClock(NOW);
  // A long interval: every pass after the first is one asked for.
  engine = buildEngine({
    dataDir: box.dir, clock, store, intervalMs: 60_000, replace: new Map([['local', new TestBackend('local', { clock })]]),
    options: { computer: COMPUTER, launchInBackground: false }, retention: { keepDays: 30, batch: 2 },
  });
  seen.length = 0;
  engine.bus.on('pass', () => seen.push('pass'));
  const remove = store.history.removeRuns.bind(store.history);
  store.history.removeRuns = (runs) => {
    remove(runs);
    seen.push('slice');
  };
});

afterEach(async () => {
  await engine.close();
  box.remove();
});

it('runs a pass asked for during a sweep before the sweep goes on', async () => {
  const removeRuns = store.history.removeRuns;
  store.history.removeRuns = (runs) => {
    removeRuns(runs);
    if (seen.filter((s) => s === 'slice').length === 1) engine.nudge();
  };
  engine.start();
  await waitFor(() => engine.retention.last, 10_000, 'the sweep to end');
  // 20 old runs (the routine's latest stays), 2 a slice: the nudge after the first slice is served at once.
  expect(engine.retention.last).toMatchObject({ runs: 20, more: false });
  expect(seen.slice(0, 4)).toEqual(['pass', 'slice', 'pass', 'slice']);
  expect(seen.filter((s) => s === 'slice')).toHaveLength(10);
  expect(store.db.prepare(`SELECT id FROM runs`).pluck().all()).toEqual(['old-20']);
});

it('goes on between passes asked for without pause: a slice after each', async () => {
  // Until the sweep has ended, or 30 passes (a loop nudged from its own pass forever never waits for a timer).
  let passes = 0;
  engine.bus.on('pass', () => {
    if (!engine.retention.last && ++passes < 30) engine.nudge();
  });
  engine.start();
  await waitFor(() => engine.retention.last, 10_000, 'the sweep to end');
  expect(engine.retention.last).toMatchObject({ runs: 20, more: false });
  const upToLast = seen.slice(0, seen.lastIndexOf('slice') + 1);
  expect(upToLast).toEqual(Array.from({ length: 10 }, () => ['pass', 'slice']).flat());
});

it('stops after the slice under way, the rest left for the next start', async () => {
  const removeRuns = store.history.removeRuns;
  let stopping: Promise<void> | null = null;
  store.history.removeRuns = (runs) => {
    removeRuns(runs);
    if (seen.filter((s) => s === 'slice').length === 3) stopping = engine.stop();
  };
  engine.start();
  // Not the promise itself: waitFor would await it and see its undefined.
  await waitFor(() => stopping !== null, 10_000, 'the third slice');
  await stopping;
  expect(seen.filter((s) => s === 'slice')).toHaveLength(3);
  expect(engine.retention.last).toBeNull();
  expect(store.db.prepare(`SELECT COUNT(*) FROM runs`).pluck().get()).toBe(21 - 6);
});
