// The engine's WAL is checkpointed between passes, not in one (store/checkpoint.ts): while its loop
// runs, its connection's commits never checkpoint, the slice after a pass does once enough waits,
// the WAL stays bounded under a loop nudged without pause, and stopping checkpoints what is left
// and gives the checkpoint back to the commits.
import { statSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { CHECKPOINT_PAGES, WalCheckpoints } from '../../main/engine/store/checkpoint.js';
import { EngineHarness } from '../helpers/engine-harness.js';
import { waitFor } from '../helpers/wait.js';

let h: EngineHarness | null = null;
let looker: WalCheckpoints | null = null;
afterEach(async () => {
  looker?.close();
  looker = null;
  await h?.close();
  h = null;
});

/** An engine not started, with a scratch table and an empty WAL; `waiting()` counts the WAL's pages not yet in tend.db. */
function engine(): { h: EngineHarness; waiting: () => number; write: (pages: number) => void } {
  h = new EngineHarness({ start: false, intervalMs: 60_000 });
  const db = h.store.db;
  db.exec(`CREATE TABLE scratch (b BLOB)`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  looker = new WalCheckpoints(db);
  const insert = db.prepare(`INSERT INTO scratch (b) VALUES (?)`);
  const store = h.store;
  return {
    h,
    waiting: () => looker!.waiting()!,
    // About `pages` pages in one commit of the engine's connection.
    write: (pages) =>
      store.tx(() => {
        for (let i = 0; i < pages; i++) insert.run(Buffer.alloc(3900, i % 251));
      }),
  };
}

it('the engine’s commits leave the WAL to the slice after a pass, which checkpoints it', async () => {
  const { h, waiting, write } = engine();
  const atPassEnd: number[] = [];
  h.engine.bus.on('pass', () => atPassEnd.push(waiting()));
  h.engine.checkpoints.own();
  write(CHECKPOINT_PAGES + 100);
  expect(waiting()).toBeGreaterThan(CHECKPOINT_PAGES);
  h.engine.start();
  expect(h.store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
  await waitFor(() => waiting() < CHECKPOINT_PAGES, 10_000, 'the checkpoint between passes');
  // The first pass ended with all of it still waiting: it was checkpointed after that pass, not in it.
  expect(atPassEnd[0]).toBeGreaterThan(CHECKPOINT_PAGES);
});

it('under a loop nudged without pause the WAL stays bounded; stopping checkpoints it and gives the checkpoint back', async () => {
  const { h, waiting, write } = engine();
  h.engine.start();
  const nudging = setInterval(() => h.engine.nudge(), 1);
  let most = 0;
  try {
    for (let round = 0; round < 40; round++) {
      write(300);
      most = Math.max(most, waiting());
      await h.morePasses(1);
    }
  } finally {
    clearInterval(nudging);
  }
  // 12,000 pages written: at most the limit, one round and what passes wrote wait at any time.
  expect(most).toBeLessThan(CHECKPOINT_PAGES + 300 + 100);
  expect(statSync(`${h.store.db.name}-wal`).size).toBeLessThan((CHECKPOINT_PAGES + 400) * (4096 + 24) + 32);
  await h.engine.stop();
  expect(waiting()).toBe(0);
  expect(h.store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(CHECKPOINT_PAGES);
});
