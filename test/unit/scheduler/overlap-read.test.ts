// Firing's overlap checks (fire.ts overlapAllows) read the runs in flight the pass read, when the
// store's change mark says nothing was written since (submit.ts claim, `mark`): no read per due
// routine. A run written after that read, by this connection or another, is still seen.
import { afterEach, expect, it } from 'vitest';
import { newRun } from '../../../main/engine/domain/run.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, SEC, T0, full, scratch } from '../../helpers/engine-fixture.js';

let f: Fixture;
const cleanup: (() => void)[] = [];
afterEach(() => {
  f?.close();
  for (const c of cleanup.splice(0)) c();
});

const perRoutineReads = (heard: string[]) => heard.filter((s) => /INDEXED BY runs_routine_active WHERE routine_id = /.test(s)).length;

it('eight routines fired with nothing written since the pass read the runs in flight: no read of each one’s runs', async () => {
  let on = false;
  const heard: string[] = [];
  f = new Fixture({ store: Store.open(':memory:', { trace: (sql) => on && heard.push(sql.replace(/\s+/g, ' ')) }) });
  const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  for (const id of ids) f.define({ id, cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  on = true;
  await f.pass();
  on = false;
  expect(perRoutineReads(heard)).toBe(0);
  for (const id of ids) expect(f.only(id).status).toBe('STARTING');
});

it('the run in flight the pass read still skips the next run time (overlap: skip)', async () => {
  f = new Fixture();
  f.define({ id: 'a', cron: '* * * * *' });
  f.clock.set(T0 + HOUR);
  await f.pass();
  f.advance(60 * SEC);
  await f.pass();
  expect(f.runs('a')).toHaveLength(1);
  expect(f.events('run:skipped').map((e) => e.routineId)).toEqual([full('a')]);
});

it('a run another connection wrote after the pass read the runs in flight is seen, and the due time skipped', async () => {
  const dir = scratch('tend-overlap-');
  cleanup.push(dir.remove);
  f = new Fixture({ db: dir.db });
  const other = Store.open(dir.db);
  cleanup.push(() => other.close());
  const def = f.define({ id: 'a', cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  // Asked after the status step read the runs in flight, before firing: the other connection writes then.
  const health = f.backend.health.bind(f.backend);
  f.backend.health = async () => {
    other.tx(() => other.runs.insert(newRun(def, T0 + HOUR - SEC, T0 + HOUR - SEC, { attempt: 1, manual: true, notBefore: null })));
    return health();
  };
  await f.pass();
  expect(f.events('run:skipped').map((e) => e.routineId)).toEqual([full('a')]);
  expect(f.runs('a').filter((r) => !r.manual)).toEqual([]);
});

it('a run this connection wrote after that read is seen too', async () => {
  f = new Fixture();
  const def = f.define({ id: 'a', cron: '0 * * * *' });
  f.clock.set(T0 + HOUR);
  const health = f.backend.health.bind(f.backend);
  f.backend.health = async () => {
    f.store.tx(() => f.store.runs.insert(newRun(def, T0 + HOUR - SEC, T0 + HOUR - SEC, { attempt: 1, manual: true, notBefore: null })));
    return health();
  };
  await f.pass();
  expect(f.events('run:skipped').map((e) => e.routineId)).toEqual([full('a')]);
});
