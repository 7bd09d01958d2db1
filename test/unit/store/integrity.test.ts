// Opening the store costs the same whatever its size: the header and schema are checked (a
// foreign or damaged schema is refused as before), the page-by-page check is not run on open. The
// full check runs off the calling thread and finds what the cheap ones cannot.
import Database from 'better-sqlite3';
import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TendError } from '../../../main/engine/errors.js';
import { checkIntegrity } from '../../../main/engine/store/integrity.js';
import { Store } from '../../../main/engine/store/store.js';
import { damageIndex } from '../../helpers/damage.js';
import { scratch } from '../../helpers/engine-fixture.js';

let dir: ReturnType<typeof scratch>;
beforeEach(() => {
  dir = scratch('tend-integrity-');
});
afterEach(() => dir.remove());

function refusal(fn: () => unknown): TendError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TendError);
    return err as TendError;
  }
  throw new Error('expected a refusal');
}

const snapshot = () => new Map(readdirSync(dir.dir).map((n) => [n, readFileSync(join(dir.dir, n))]));

describe('opening the store', () => {
  it('does not read every page: a file damaged past its schema still opens, and the full check finds the damage', async () => {
    Store.open(dir.db).close();
    damageIndex(dir.db);
    const store = Store.open(dir.db);
    try {
      expect(store.routines.defsVersion()).toBe(0);
    } finally {
      store.close();
    }
    const r = await checkIntegrity(dir.db);
    expect(r.ok).toBe(false);
    expect(r.problems.join('\n')).toMatch(/page|btree|corrupt/i);
  });

  it('the full check passes a sound file', async () => {
    const store = Store.open(dir.db);
    store.tx(() => store.routines.ensureSchedule('x', 1));
    const r = await checkIntegrity(dir.db);
    store.close();
    expect(r).toMatchObject({ ok: true, problems: [] });
  });

  it('the full check of a file that is not SQLite reports it, and does not throw', async () => {
    const path = join(dir.dir, 'other.db');
    const fd = openSync(path, 'w');
    writeSync(fd, 'not a database\n'.repeat(400));
    closeSync(fd);
    const r = await checkIntegrity(path);
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatch(/SQLITE_NOTADB/);
  });

  it("refuses someone else's SQLite file (tables, no Tend version) and leaves it untouched", () => {
    const raw = new Database(dir.db);
    raw.exec(`CREATE TABLE groceries (item TEXT); INSERT INTO groceries VALUES ('milk');`);
    raw.close();
    const before = snapshot();
    const err = refusal(() => Store.open(dir.db));
    expect(err.code).toBe('REFUSED');
    expect(err.message).toMatch(/is not a Tend database or is corrupt \(it has tables \(groceries\) but no Tend schema version\); it is left untouched/);
    expect(snapshot()).toEqual(before);
  });

  it('refuses a file at a Tend version whose tables are missing, read-only or not', () => {
    const raw = new Database(dir.db);
    raw.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    raw.pragma('user_version = 2');
    raw.close();
    const before = snapshot();
    for (const readonly of [false, true]) {
      const err = refusal(() => Store.open(dir.db, { readonly }));
      expect(err.message).toMatch(/is not a Tend database or is corrupt \(schema version 2 but tables missing \(schedules, routines, routine_deps\)\); it is left untouched/);
    }
    expect(snapshot()).toEqual(before);
  });

  it('refuses a file whose schema page is damaged', () => {
    Store.open(dir.db).close();
    const raw = new Database(dir.db);
    raw.pragma('journal_mode = DELETE');
    raw.close();
    const fd = openSync(dir.db, 'r+');
    writeSync(fd, Buffer.alloc(512, 0x55), 0, 512, 100); // page 1 past the file header: sqlite_master's b-tree
    closeSync(fd);
    const err = refusal(() => Store.open(dir.db));
    expect(err.message).toMatch(/is not a Tend database or is corrupt \(SQLITE_(CORRUPT|NOTADB)\); it is left untouched/);
  });
});
