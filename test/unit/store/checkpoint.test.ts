// The engine's connection checkpoints its WAL between passes, not in its commits (store/checkpoint.ts):
// once owned, a commit never checkpoints; a step checkpoints once as many pages wait as SQLite's
// own limit, and not before; the count of waiting pages is SQLite's; released, the connection
// checkpoints what is left and its commits checkpoint again. Other connections keep the default.
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKPOINT_PAGES, WalCheckpoints } from '../../../main/engine/store/checkpoint.js';
import { Store } from '../../../main/engine/store/store.js';
import { scratch } from '../../helpers/engine-fixture.js';

const dirs: { remove: () => void }[] = [];
const stores: Store[] = [];
const owners: WalCheckpoints[] = [];
afterEach(() => {
  for (const o of owners.splice(0)) o.close();
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) d.remove();
});

function open(): { store: Store; path: string } {
  const dir = scratch('tend-checkpoint-');
  dirs.push(dir);
  const store = Store.open(dir.db);
  stores.push(store);
  store.db.exec(`CREATE TABLE scratch (b BLOB)`);
  // The WAL starts empty: what the migrations wrote is in the database.
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  return { store, path: dir.db };
}

function checkpoints(store: Store, pages?: number): WalCheckpoints {
  const c = new WalCheckpoints(store.db, pages);
  owners.push(c);
  return c;
}

/** About `pages` pages in one commit: a blob of most of a 4 KiB page per row. */
function write(store: Store, pages: number): void {
  const insert = store.db.prepare(`INSERT INTO scratch (b) VALUES (?)`);
  store.tx(() => {
    for (let i = 0; i < pages; i++) insert.run(Buffer.alloc(3900, i % 251));
  });
}

describe('WalCheckpoints', () => {
  it('counts the pages waiting in the WAL as SQLite does', () => {
    const { store } = open();
    const c = checkpoints(store);
    c.own();
    write(store, 50);
    const waiting = c.waiting();
    expect(waiting).toBeGreaterThanOrEqual(50);
    const [r] = store.db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    // Nothing was checkpointed before: all the log was waiting.
    expect(waiting).toBe(r!.log);
    expect(c.waiting()).toBe(0);
  });

  it('once owned, a commit that takes the WAL past the limit does not checkpoint it', () => {
    const { store } = open();
    const c = checkpoints(store);
    c.own();
    expect(c.owning).toBe(true);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    write(store, CHECKPOINT_PAGES + 100);
    expect(c.waiting()).toBeGreaterThan(CHECKPOINT_PAGES);
  });

  it('not owned, the same commit checkpoints (SQLite’s default, which other connections keep)', () => {
    const { store } = open();
    const c = checkpoints(store);
    write(store, CHECKPOINT_PAGES + 100);
    expect(c.waiting()).toBe(0);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(CHECKPOINT_PAGES);
  });

  it('another connection to the same file keeps checkpointing in its commits', () => {
    const { store, path } = open();
    checkpoints(store).own();
    const other = Store.open(path);
    stores.push(other);
    expect(other.db.pragma('wal_autocheckpoint', { simple: true })).toBe(CHECKPOINT_PAGES);
  });

  it('a step checkpoints once the limit waits, and not before', () => {
    const { store } = open();
    const c = checkpoints(store, 200);
    c.own();
    write(store, 150);
    const before = c.waiting()!;
    expect(before).toBeLessThan(200);
    expect(c.step()).toBeNull();
    expect(c.waiting()).toBe(before);
    write(store, 60);
    const due = c.waiting()!;
    expect(due).toBeGreaterThanOrEqual(200);
    expect(c.step()).toEqual({ log: due, checkpointed: due });
    expect(c.waiting()).toBe(0);
  });

  it('a step at exactly the limit checkpoints', () => {
    const { store } = open();
    const c = checkpoints(store);
    c.own();
    write(store, 20);
    const waiting = c.waiting()!;
    const exact = checkpoints(store, waiting);
    exact.own();
    expect(exact.step()).not.toBeNull();
    expect(c.waiting()).toBe(0);
  });

  it('a step of a connection that does not own the checkpoint does nothing', () => {
    const { store } = open();
    const c = checkpoints(store, 1);
    store.db.pragma('wal_autocheckpoint = 0');
    write(store, 10);
    expect(c.step()).toBeNull();
    expect(c.waiting()).toBeGreaterThanOrEqual(10);
  });

  it('released, it checkpoints what waits and gives the checkpoint back to the commits', () => {
    const { store } = open();
    const c = checkpoints(store);
    c.own();
    write(store, 30);
    c.release();
    expect(c.owning).toBe(false);
    expect(c.waiting()).toBe(0);
    expect(store.db.pragma('wal_autocheckpoint', { simple: true })).toBe(CHECKPOINT_PAGES);
    // Released twice: nothing more.
    c.release();
    expect(c.step()).toBeNull();
  });

  it('a database without a WAL (in memory) has no checkpoint to own', () => {
    const store = Store.open(':memory:');
    stores.push(store);
    const c = checkpoints(store, 1);
    c.own();
    expect(c.owning).toBe(false);
    expect(c.waiting()).toBeNull();
    expect(c.step()).toBeNull();
  });

  it('a wal-index it cannot read makes every step checkpoint', () => {
    const { store } = open();
    const c = checkpoints(store);
    c.own();
    write(store, 5);
    // As if its -shm could not be opened.
    (c as unknown as { shm: number | null }).shm = null;
    expect(c.waiting()).toBeNull();
    expect(c.step()).not.toBeNull();
  });
});
