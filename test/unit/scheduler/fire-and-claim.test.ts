// Firing and claiming share one transaction (scheduler/submit.ts `claim`): the health gate is asked
// first, a fired run that may start is written once (STARTING, on its backend, in its directory),
// one that must wait is written once (PENDING), and what the pass writes is counted through the
// store's trace.
import { afterEach, describe, expect, it } from 'vitest';
import { runNow } from '../../../main/engine/ops/control.js';
import { newestInCycle, withUnwritten } from '../../../main/engine/scheduler/backlog.js';
import { runDirFor } from '../../../main/engine/scheduler/spec.js';
import type { RunRow } from '../../../main/engine/domain/types.js';
import { Store } from '../../../main/engine/store/store.js';
import { Fixture, HOUR, MIN, SEC, full, scratch } from '../../helpers/engine-fixture.js';

let f: Fixture;
afterEach(() => f?.close());

/** A fixture whose store hears its statements; `heard()` gives those of the last `pass()`. */
function traced(options: ConstructorParameters<typeof Fixture>[0] = {}) {
  let on = false;
  let statements: string[] = [];
  const store = Store.open(':memory:', { trace: (sql) => on && statements.push(sql) });
  const fx = new Fixture({ ...options, store });
  return {
    fx,
    pass: async () => {
      statements = [];
      on = true;
      try {
        return await fx.pass();
      } finally {
        on = false;
      }
    },
    count: (re: RegExp) => statements.filter((s) => re.test(s)).length,
  };
}

const INSERT_RUN = /^INSERT INTO runs\b/;
const UPDATE_RUN = /^UPDATE runs\b/;
const BEGIN = /^BEGIN IMMEDIATE\b/;

describe('a run fired and started in the same pass', () => {
  it('is written once: STARTING, on its backend, in its job directory, and launched there', async () => {
    const t = traced();
    f = t.fx;
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *' });
    f.advance(MIN);
    const report = await t.pass();
    expect(report).toMatchObject({ fired: 3, submitted: 3 });
    expect(t.count(INSERT_RUN)).toBe(3);
    expect(t.count(UPDATE_RUN)).toBe(0);
    for (const id of ['a', 'b', 'c']) {
      const run = f.only(id);
      const dir = runDirFor(f.opts.dataDir, run.id, run.createdAt);
      expect(run).toMatchObject({ status: 'STARTING', backend: 'local', runDir: dir });
      expect(f.backend.job(run.id).spec.runDir).toBe(dir);
      expect(f.store.ledger.get('run', run.id)).not.toBeNull();
    }
    // Nothing to settle: the transaction that fires and claims, and the one that records the launches.
    expect(t.count(BEGIN)).toBe(2);
  });

  it('a pass that settles runs, fires and launches others commits three times and moves each run once', async () => {
    const t = traced();
    f = t.fx;
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '* * * * *' });
    f.advance(MIN);
    await t.pass();
    for (const id of ['a', 'b', 'c']) f.backend.finish(f.only(id).id, { exitCode: 0 });
    f.advance(MIN);
    const report = await t.pass();
    expect(report).toMatchObject({ settled: 3, fired: 3, submitted: 3 });
    // Settling (COMPLETED), firing and claiming, recording: one transaction each.
    expect(t.count(BEGIN)).toBe(3);
    expect(t.count(UPDATE_RUN)).toBe(3);
    expect(t.count(INSERT_RUN)).toBe(3);
    // Counted for the metrics from the run as settling read it, not read again once moved.
    expect(t.count(/^SELECT routine_id, kind, status, created_at, started_at, ended_at FROM runs\b/)).toBe(0);
    expect(f.store.history.runTotals().map((r) => [r.routineId, r.status, r.n])).toEqual(['a', 'b', 'c'].map((id) => [full(id), 'COMPLETED', 1]));
    for (const id of ['a', 'b', 'c']) expect(f.runs(id).map((r) => r.status)).toEqual(['COMPLETED', 'STARTING']);
  });

  it('the runs a pass fires are placed in their routines’ chains from heads read in one statement, not one read per run', async () => {
    const t = traced();
    f = t.fx;
    const ids = ['a', 'b', 'c', 'd'];
    for (const id of ids) f.define({ id, cron: '* * * * *' });
    f.advance(MIN);
    await t.pass();
    for (const id of ids) f.backend.finish(f.only(id).id, { exitCode: 0 });
    f.advance(MIN);
    const report = await t.pass();
    expect(report).toMatchObject({ fired: 4, submitted: 4 });
    expect(t.count(/FROM routine_latest WHERE routine_id = /)).toBe(0);
    expect(t.count(/FROM routine_latest WHERE routine_id IN /)).toBe(1);
    for (const id of ids) {
      const [first, second] = f.runs(id);
      expect(first!.status).toBe('COMPLETED');
      expect(second).toMatchObject({ status: 'STARTING' });
      // Claimed, launched and recorded: in the ledger, its lease released.
      expect(f.store.ledger.get('run', second!.id)).toMatchObject({ backend: 'local', submittedAt: f.now() });
      expect(f.store.ledger.lease('run', second!.id)).toBeNull();
    }
  });
});

describe('a fired run that cannot start yet', () => {
  it('is written once, PENDING with its reason, and moved once when a slot frees', async () => {
    const t = traced({ options: { maxParallel: 1 } });
    f = t.fx;
    f.define({ id: 'a', cron: '* * * * *' });
    f.define({ id: 'b', cron: '* * * * *' });
    f.advance(MIN);
    await t.pass();
    expect(t.count(INSERT_RUN)).toBe(2);
    expect(t.count(UPDATE_RUN)).toBe(0);
    const [started] = f.backend.submitted();
    const waiting = [...f.runs('a'), ...f.runs('b')].find((r) => r.id !== started)!;
    expect(waiting.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(waiting.id)).toBe('no free slot (max_parallel 1)');

    f.backend.finish(started!, { exitCode: 0 });
    f.advance(SEC);
    await t.pass();
    expect(f.run(waiting.id)).toMatchObject({ status: 'STARTING', backend: 'local', runDir: runDirFor(f.opts.dataDir, waiting.id, waiting.createdAt) });
    // The settled run's COMPLETED, the waiting run's STARTING.
    expect(t.count(UPDATE_RUN)).toBe(2);
  });

  it('on a paused backend: the health gate is asked before firing, and the run is written PENDING with the pause as its reason', async () => {
    f = new Fixture();
    f.define({ id: 'a', cron: '* * * * *' });
    f.backend.setHealth(false, 'cluster down');
    f.advance(MIN);
    const report = await f.pass();
    expect(report.fired).toBe(1);
    expect(f.backend.ops()).toEqual(['health']);
    const run = f.only('a');
    expect(run).toMatchObject({ status: 'PENDING', backend: null, runDir: null });
    expect(f.scheduler.waitReasons().get(run.id)).toBe('backend local paused: cluster down');
  });
});

describe('runs fired together are judged as if written', () => {
  it('a dependency fired in the same pass holds back its dependent, though an earlier run of it completed that day', async () => {
    f = new Fixture();
    f.define({ id: 'fetch', cron: '30 9,10 * * *' });
    f.define({ id: 'parse', cron: '30 10 * * *', after: [full('fetch')] });
    f.advance(30 * MIN);
    await f.pass();
    f.backend.finish(f.only('fetch').id, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    expect(f.only('fetch').status).toBe('COMPLETED');

    f.advance(HOUR - SEC);
    const report = await f.pass();
    expect(report.fired).toBe(2);
    expect(f.latest('fetch').status).toBe('STARTING');
    const parse = f.only('parse');
    expect(parse.status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(parse.id)).toBe(`waiting for ${full('fetch')} (PENDING on 2026-01-05)`);
    expect(f.backend.submitted()).not.toContain(parse.id);
  });

  it('a fired run due before a run already waiting takes the free slot first (run time order)', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'cron', cron: '1 9 * * *' });
    f.define({ id: 'manual', cron: '0 12 * * *' });
    // The pass that would fire `cron` at 09:01:00 comes late, after a run by hand was asked for.
    f.advance(MIN + 5 * SEC);
    const byHand = runNow(f.control(), full('manual'));
    f.advance(5 * SEC);
    await f.pass();
    expect(f.only('cron').status).toBe('STARTING');
    expect(f.run(byHand.id).status).toBe('PENDING');
    expect(f.scheduler.waitReasons().get(byHand.id)).toBe('no free slot (max_parallel 1)');
  });

  it('when the due triggers cannot be read, the runs already waiting are still claimed and launched', async () => {
    f = new Fixture({ options: { maxParallel: 1 } });
    f.define({ id: 'a', cron: '* * * * *' });
    f.define({ id: 'b', cron: '* * * * *' });
    f.advance(MIN);
    await f.pass();
    const [started] = f.backend.submitted();
    const waiting = [...f.runs('a'), ...f.runs('b')].find((r) => r.id !== started)!;
    f.backend.finish(started!, { exitCode: 0 });
    f.store.routines.dueTriggers = () => {
      throw new Error('disk I/O error');
    };
    f.advance(SEC);
    const report = await f.pass();
    expect(report).toMatchObject({ faults: 1, fired: 0, submitted: 1 });
    expect(f.events('pass:fault').map((e) => e.message)).toEqual(['fire: disk I/O error']);
    expect(f.run(waiting.id).status).toBe('STARTING');
  });
});


describe('the order and the dependencies of runs not written yet', () => {
  const run = (id: string, scheduledAt: number, createdAt: number, o: Partial<RunRow> = {}): RunRow =>
    ({ id, routineId: 'r', cycle: 'd1', scheduledAt, createdAt, status: 'PENDING', ...o }) as RunRow;

  it('withUnwritten merges them where runs.active() would read them: by run time, then creation, after written runs on a tie, in firing order', () => {
    const active = [run('w1', 10, 1), run('w2', 20, 5), run('w3', 20, 9), run('w4', 30, 2)];
    const fresh = [run('f1', 20, 9), run('f2', 5, 9), run('f3', 20, 9), run('f4', 40, 9)];
    expect(withUnwritten(active, fresh).map((r) => r.id)).toEqual(['f2', 'w1', 'w2', 'w3', 'f1', 'f3', 'w4', 'f4']);
    expect(withUnwritten(active, [])).toBe(active);
  });

  it("newestInCycle: an unwritten run is the newest of its cycle unless a written one is later by run time or creation", () => {
    const written = run('w', 20, 5, { status: 'COMPLETED' });
    expect(newestInCycle(written, undefined, 'd1')).toBe(written);
    expect(newestInCycle(written, [run('f', 19, 9)], 'd1')).toBe(written);
    expect(newestInCycle(written, [run('f', 21, 9)], 'd1')!.id).toBe('f');
    // Same run time: creation decides, and on the same creation the one written later (the unwritten).
    expect(newestInCycle(written, [run('f', 20, 4)], 'd1')).toBe(written);
    expect(newestInCycle(written, [run('f', 20, 5)], 'd1')!.id).toBe('f');
    expect(newestInCycle(written, [run('f', 30, 9, { cycle: 'd2' })], 'd1')).toBe(written);
    expect(newestInCycle(null, [run('f1', 20, 9), run('f2', 20, 9), run('f0', 10, 9)], 'd1')!.id).toBe('f2');
  });
});

/**
 * `body` with `f` a fixture on a database file and a second connection to that file (another
 * process, as the CLI is): what it writes moves the store's change mark through data_version.
 */
async function withOtherConnection(prefix: string, body: (other: Store) => Promise<void>): Promise<void> {
  const dir = scratch(prefix);
  f = new Fixture({ db: dir.db });
  const other = Store.open(dir.db);
  try {
    await body(other);
  } finally {
    other.close();
    f.close();
    dir.remove();
  }
}

describe('the unfinished runs, read once a pass', () => {
  const ACTIVE = /^SELECT \* FROM runs INDEXED BY runs_routine_active WHERE status IN/;

  it('are read by the status step and reused by the fire step when nothing was written between', async () => {
    const t = traced();
    f = t.fx;
    for (const id of ['a', 'b']) f.define({ id, cron: '0 * * * *' });
    f.advance(HOUR);
    await t.pass();
    f.advance(SEC);
    await t.pass(); // both seen RUNNING: a write in the check step, before the status step reads
    expect(t.count(ACTIVE)).toBe(1);
    // Observing a run in flight reads what it needs of the run, not its whole row.
    expect(t.count(/^SELECT \* FROM runs WHERE id = /)).toBe(0);
    expect(['a', 'b'].map((id) => f.only(id).status)).toEqual(['RUNNING', 'RUNNING']);
  });

  it('are not read at all by a pass that finds nothing written since the last one read them (an idle daemon with runs waiting)', async () => {
    const t = traced({ options: { maxParallel: 1 } });
    f = t.fx;
    for (const id of ['a', 'b', 'c']) f.define({ id, cron: '0 * * * *' });
    f.advance(HOUR);
    await t.pass(); // a launched, b and c waiting for the slot
    f.advance(SEC);
    await t.pass(); // a seen RUNNING: a write, so this pass reads them
    expect(t.count(ACTIVE)).toBe(1);
    f.advance(SEC);
    await t.pass();
    expect(t.count(ACTIVE)).toBe(0);
    // What the pass did with the runs it did not read again: b and c still wait, and say why.
    expect(['a', 'b', 'c'].map((id) => f.only(id).status)).toEqual(['RUNNING', 'PENDING', 'PENDING']);
    expect(f.scheduler.waitReasons().get(f.only('b').id)).toMatch(/no free slot/);
    // A run's end is a write: the next pass reads them, and the slot goes to the next one.
    f.backend.finish(f.only('a').id, { exitCode: 0 });
    f.advance(SEC);
    await t.pass();
    expect(t.count(ACTIVE)).toBeGreaterThan(0);
    expect(['a', 'b', 'c'].map((id) => f.only(id).status)).toEqual(['COMPLETED', 'STARTING', 'PENDING']);
  });

  it('are read again by the next pass when another connection wrote since the last pass (a run asked for by hand is launched)', async () => {
    await withOtherConnection('tend-reread-next-', async (cli) => {
      f.define({ id: 'a', cron: '0 12 * * *' });
      await f.pass();
      await f.pass();
      const asked = runNow({ ...f.control(), store: cli }, full('a'));
      await f.pass();
      expect(f.run(asked.id).status).toBe('STARTING');
    });
  });

  it('are read again when another connection wrote between (a run asked for by hand meanwhile is launched in that pass)', async () => {
    await withOtherConnection('tend-reread-', async (cli) => {
      f.define({ id: 'a', cron: '0 12 * * *' });
      let asked: RunRow | null = null;
      // The promote step runs between the status step and the fire step.
      const idsWithStatus = f.store.jobs.idsWithStatus.bind(f.store.jobs);
      f.store.jobs.idsWithStatus = (status) => {
        asked ??= runNow({ ...f.control(), store: cli }, full('a'));
        return idsWithStatus(status);
      };
      await f.pass();
      expect(asked).not.toBeNull();
      expect(f.run(asked!.id).status).toBe('STARTING');
    });
  });
});

describe('the due triggers, read once a pass', () => {
  const DUE = /^SELECT routine_id, next_run_at, first_due_at FROM triggers WHERE state = 'scheduled'/;

  it('are read before the health gate and fired as read when nothing was written between', async () => {
    const t = traced();
    f = t.fx;
    for (const id of ['a', 'b']) f.define({ id, cron: '0 * * * *' });
    f.advance(HOUR);
    const report = await t.pass();
    expect(report).toMatchObject({ fired: 2, submitted: 2 });
    expect(t.count(DUE)).toBe(1);
    expect(['a', 'b'].map((id) => f.only(id).status)).toEqual(['STARTING', 'STARTING']);
  });

  it('are read again when another connection wrote while the health gate was asked (a trigger made due meanwhile fires in that pass)', async () => {
    await withOtherConnection('tend-due-reread-', async (other) => {
      f.define({ id: 'a', cron: '0 * * * *' });
      f.define({ id: 'b', cron: '0 12 * * *' });
      f.advance(HOUR);
      const health = f.backend.health.bind(f.backend);
      f.backend.health = async () => {
        other.db.prepare(`UPDATE triggers SET next_run_at = ? WHERE routine_id = ?`).run(f.now(), full('b'));
        return health();
      };
      const report = await f.pass();
      expect(report.fired).toBe(2);
      expect(f.runs('b')).toHaveLength(1);
      expect(f.only('b').scheduledAt).toBe(f.now());
    });
  });
});
