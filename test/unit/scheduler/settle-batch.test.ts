// The runs a check finds finished leave the ledger and are read together (check.ts take): one
// statement each for eight runs, each settled as before; one whose ledger entry is gone by then
// (settled meanwhile by another process) is not settled again; a run in the ledger without a row
// is cleared and nothing more.
import { afterEach, expect, it } from 'vitest';
import type { PollState } from '../../../main/engine/backend.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, SEC, T0, full } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

async function launched(ids: string[], store?: Store): Promise<string[]> {
  f = new Fixture(store ? { store } : {});
  for (const id of ids) f.define({ id, cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  await f.pass();
  return ids.map((id) => f.only(id).id);
}

it('eight runs finished leave the ledger in one statement and are read in one, only the columns settling uses; each is settled', async () => {
  let on = false;
  const heard: string[] = [];
  const runs = await launched(IDS, Store.open(':memory:', { trace: (sql) => on && heard.push(sql.replace(/\s+/g, ' ')) }));
  runs.forEach((id, k) => f.backend.finish(id, { exitCode: k === 3 ? 2 : 0 }));
  f.advance(SEC);
  on = true;
  const report = await f.pass();
  on = false;
  expect(report.settled).toBe(8);
  expect(heard.filter((s) => /^DELETE FROM ledger\b/.test(s))).toHaveLength(1);
  const reads = heard.filter((s) => /^SELECT .* FROM runs WHERE id\b/.test(s));
  expect(reads).toHaveLength(1);
  // Not the backend, the directory, the exit or the end: settling writes those or never reads them.
  expect(reads[0]).not.toMatch(/\*|run_dir|backend|exit_code|ended_at|heartbeat_at/);
  expect(f.store.ledger.count()).toBe(0);
  runs.forEach((id, k) => expect(f.run(id).status).toBe(k === 3 ? 'ERROR' : 'COMPLETED'));
  expect(f.events('run:completed').map((e) => e.routineId)).toEqual(IDS.filter((_, k) => k !== 3).map(full));
  expect(f.events('run:failed').map((e) => e.runId)).toEqual([runs[3]]);
});

it('a run settled meanwhile (its ledger entry gone once the check writes) is not settled again; the others are', async () => {
  const runs = await launched(['a', 'b']);
  for (const id of runs) f.backend.finish(id, { exitCode: 0 });
  const poll = f.backend.poll.bind(f.backend);
  f.backend.poll = async (handles): Promise<PollState[]> => {
    const states = await poll(handles);
    // Another process settled b while this one asked the backend.
    f.store.db.prepare(`DELETE FROM ledger WHERE ref_id = ?`).run(runs[1]);
    f.store.runs.cas(runs[1]!, ['STARTING', 'RUNNING'], 'CANCELLED', { reason: 'stopped by hand', endedAt: f.now() });
    return states;
  };
  f.advance(SEC);
  await f.pass();
  expect(f.run(runs[0]!).status).toBe('COMPLETED');
  expect(f.run(runs[1]!)).toMatchObject({ status: 'CANCELLED', reason: 'stopped by hand', exitCode: null });
  expect(f.events('run:completed').map((e) => e.runId)).toEqual([runs[0]]);
});

it('a finished run in the ledger without a row of its own leaves the ledger and nothing more', async () => {
  const runs = await launched(['a', 'b']);
  for (const id of runs) f.backend.finish(id, { exitCode: 0 });
  f.store.db.pragma('foreign_keys = OFF');
  f.store.db.prepare(`DELETE FROM runs WHERE id = ?`).run(runs[0]);
  f.advance(SEC);
  const report = await f.pass();
  expect(report.faults).toBe(0);
  expect(f.store.ledger.count()).toBe(0);
  expect(f.events('run:completed').map((e) => e.runId)).toEqual([runs[1]]);
});
