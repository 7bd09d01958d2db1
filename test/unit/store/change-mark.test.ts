// Store.changeMark moves whenever a row of the database changes, by this connection or another,
// and only then: the pass reuses a read while the mark has not moved (scheduler.ts).
import { afterEach, expect, it } from 'vitest';
import { Store } from '../../../main/engine/store/store.js';
import { scratch } from '../../helpers/engine-fixture.js';

const dirs: { remove: () => void }[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) d.remove();
});

it('moves with a write of this connection and a commit of another, not with reads or writes that change nothing', () => {
  const dir = scratch('tend-mark-');
  dirs.push(dir);
  const a = Store.open(dir.db);
  const b = Store.open(dir.db);
  stores.push(a, b);
  const m0 = a.changeMark();
  a.runs.active();
  a.ledger.release('run', 'none'); // deletes nothing
  expect(a.changeMark()).toBe(m0);
  a.tx(() => a.ledger.claim('run', 'r1', 'me', 1));
  const m1 = a.changeMark();
  expect(m1).not.toBe(m0);
  b.tx(() => b.ledger.claim('run', 'r2', 'me', 1));
  const m2 = a.changeMark();
  expect(m2).not.toBe(m1);
  expect(a.changeMark()).toBe(m2);
  // A write taken back still moves it: a read may be redone, never kept past a change.
  expect(() =>
    a.tx(() => {
      a.ledger.claim('run', 'r3', 'me', 1);
      throw new Error('rolled back');
    }),
  ).toThrow('rolled back');
  expect(a.changeMark()).not.toBe(m2);
});
