// Write transactions begin as writers. A deferred transaction that reads, then writes after
// another connection committed, cannot upgrade (SQLITE_BUSY at once, whatever busy_timeout says):
// the lock must be taken at BEGIN. Every transaction in the code goes through writeTx.
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Store } from '../../../main/engine/store/store.js';
import { REPO, scratch } from '../../helpers/cli.js';

let box: ReturnType<typeof scratch>;
let store: Store;
let other: Database.Database;
beforeEach(() => {
  box = scratch('tend-writetx-');
  store = Store.open(join(box.dir, 'tend.db'));
  other = new Database(join(box.dir, 'tend.db'));
  other.pragma('busy_timeout = 0');
});
afterEach(() => {
  other.close();
  store.close();
  box.remove();
});

it('store.tx holds the write lock from its first read: another writer waits, and the transaction commits', () => {
  let otherWrite: unknown = null;
  store.tx(() => {
    store.jobs.status(1);
    try {
      other.prepare(`INSERT INTO events (at, type, level, message, data) VALUES (0, 'x', 'info', 'm', '{}')`).run();
    } catch (err) {
      otherWrite = (err as { code?: string }).code;
    }
    store.events.append({ type: 'job:posted', jobId: 1, message: 'after the read' }, 1);
  });
  expect(otherWrite).toBe('SQLITE_BUSY');
  expect(store.events.recent(10).map((e) => e.message)).toEqual(['after the read']);
});

it('no transaction in main/ or worker/ is opened except through writeTx', () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        // writeTx (store/busy.ts) is the one place that opens a transaction.
        if (p.endsWith(join('store', 'busy.ts'))) continue;
        const code = readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
        if (/\.transaction\(/.test(code)) offenders.push(relative(REPO, p));
        // A BEGIN statement (not a trigger body's BEGIN … END).
        if (/\bBEGIN(\s+(DEFERRED|EXCLUSIVE|TRANSACTION))?\s*(;|['"`])/i.test(code)) offenders.push(`${relative(REPO, p)} (raw BEGIN)`);
      }
    }
  };
  walk(join(REPO, 'main'));
  walk(join(REPO, 'worker'));
  expect(offenders).toEqual([]);
});
