// External routines are started by nobody: they report over the API (here through `tend report`)
// and are watched like any other routine — late batch runs are DELAYED, a silent realtime routine
// is ERROR. A worker token may only report for routines of its own computer.
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, killTracked, Pool, readState, runDirsUnder, scratch, tend, waitFor, type RunRecord } from './harness.js';

let box: ReturnType<typeof scratch>;
let pool: Pool;

beforeAll(async () => {
  assertBuilt();
  box = scratch('tend-external-');
  pool = await Pool.start(box.dir);
});
afterAll(async () => {
  await pool?.stopAll();
  await killTracked();
  box?.remove();
});

/** `tend report …` from a shell script on the daemon host (address and token from api.json). */
function report(...args: string[]) {
  return tend(pool.dataDir, ['report', ...args]);
}

function reportOk(...args: string[]): string {
  const r = report(...args);
  if (r.code !== 0) throw new Error(`tend report ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const runsOf = (id: string): RunRecord[] => pool.db.runs(id);

describe('external routines', () => {
  it('shows RUNNING after start, keeps heartbeats, and COMPLETED after complete', async () => {
    pool.tendOk('routine', 'add', 'u@ext:sync', '--external', '--every', '1h');
    expect(reportOk('u@ext:sync', 'start')).toMatch(/start reported \(run \S+, RUNNING\)/);
    const [run] = runsOf('u@ext:sync');
    expect(run!.status).toBe('RUNNING');
    const before = pool.db.get<{ heartbeat_at: number }>(`SELECT heartbeat_at FROM runs WHERE id = ?`, run!.id)!.heartbeat_at;
    await waitFor(() => Date.now() > before + 5, 1000, 'the clock to move');
    reportOk('u@ext:sync', 'heartbeat');
    expect(pool.db.get<{ heartbeat_at: number }>(`SELECT heartbeat_at FROM runs WHERE id = ?`, run!.id)!.heartbeat_at).toBeGreaterThan(before);
    reportOk('u@ext:sync', 'log', '--message', 'fetched 120 rows');
    expect(pool.db.events('external:log').map((e) => [e.run_id, e.message])).toContainEqual([run!.id, 'fetched 120 rows']);
    // What it sent is its log.
    const logs = tend(pool.dataDir, ['logs', 'u@ext:sync']);
    expect(logs.stdout).toMatch(/^\S+Z fetched 120 rows\n$/);
    expect(logs.stderr).toContain(`run ${run!.id} (RUNNING`);
    reportOk('u@ext:sync', 'complete');
    expect(runsOf('u@ext:sync').map((r) => [r.id, r.status, r.exit_code])).toEqual([[run!.id, 'COMPLETED', 0]]);
    // Tend started nothing for it: no command, no job directory.
    expect(pool.db.commands('u@ext')).toEqual([]);
    expect(runDirsUnder(pool.dataDir).has(run!.id)).toBe(false);
    // A completion sent again (by run id, or not) is a no-op success: the run and its events stay as they were.
    const ended = runsOf('u@ext:sync');
    const completions = pool.db.events('run:completed').filter((e) => e.run_id === run!.id).length;
    expect(report('u@ext:sync', 'complete', '--run-id', run!.id).code).toBe(0);
    expect(report('u@ext:sync', 'complete').code).toBe(0);
    const replayed = await pool.http('POST', `/api/external/${encodeURIComponent('u@ext:sync')}/complete`, { runId: run!.id });
    expect(replayed.status).toBe(200);
    expect(runsOf('u@ext:sync')).toEqual(ended);
    expect(pool.db.events('run:completed').filter((e) => e.run_id === run!.id)).toHaveLength(completions);
    // A contrary report of a finished run is still refused.
    const contrary = report('u@ext:sync', 'fail', '--run-id', run!.id);
    expect(contrary.code).not.toBe(0);
  });

  it('shows ERROR with the message and exit code after fail', () => {
    pool.tendOk('routine', 'add', 'u@ext:backup', '--external', '--every', '1h');
    reportOk('u@ext:backup', 'start', '--run-id', 'nightly-1');
    reportOk('u@ext:backup', 'fail', '--run-id', 'nightly-1', '--exit-code', '3', '--message', 'disk full on /mnt/backup');
    expect(runsOf('u@ext:backup').map((r) => [r.id, r.status, r.exit_code, r.reason])).toEqual([['nightly-1', 'ERROR', 3, 'disk full on /mnt/backup']]);
    expect(pool.db.events('run:failed').some((e) => e.run_id === 'nightly-1' && e.message.includes('disk full on /mnt/backup'))).toBe(true);
  });

  it('keeps overlapping runs apart by run id', () => {
    pool.tendOk('routine', 'add', 'u@ext:multi', '--external', '--every', '1h');
    reportOk('u@ext:multi', 'start', '--run-id', 'a-1');
    reportOk('u@ext:multi', 'start', '--run-id', 'b-1');
    reportOk('u@ext:multi', 'complete', '--run-id', 'b-1');
    expect(Object.fromEntries(runsOf('u@ext:multi').map((r) => [r.id, r.status]))).toEqual({ 'a-1': 'RUNNING', 'b-1': 'COMPLETED' });
    reportOk('u@ext:multi', 'fail', '--run-id', 'a-1', '--exit-code', '1');
    expect(Object.fromEntries(runsOf('u@ext:multi').map((r) => [r.id, r.status]))).toEqual({ 'a-1': 'ERROR', 'b-1': 'COMPLETED' });
  });

  it('run ids are per routine: two routines may both use one; a finished run id is not started again', () => {
    pool.tendOk('routine', 'add', 'u@ext:left', '--external', '--every', '1h');
    pool.tendOk('routine', 'add', 'u@ext:right', '--external', '--every', '1h');
    reportOk('u@ext:left', 'start', '--run-id', 'daily');
    expect(reportOk('u@ext:right', 'start', '--run-id', 'daily')).toMatch(/start reported \(run \S+, RUNNING\)/);
    reportOk('u@ext:right', 'complete', '--run-id', 'daily');
    expect(runsOf('u@ext:left').map((r) => [r.id, r.status])).toEqual([['daily', 'RUNNING']]);
    expect(runsOf('u@ext:right').map((r) => r.status)).toEqual(['COMPLETED']);
    const again = report('u@ext:right', 'start', '--run-id', 'daily');
    expect(again.code).toBe(1);
    // The id as typed, not the URL-encoded path it went by.
    expect(again.stderr).toBe('tend: u@ext:right start: run daily of u@ext:right has ended already (COMPLETED): report start with a new run id\n');
    expect(runsOf('u@ext:right').map((r) => r.status)).toEqual(['COMPLETED']);
    reportOk('u@ext:left', 'complete', '--run-id', 'daily');
    expect(runsOf('u@ext:left').map((r) => [r.id, r.status])).toEqual([['daily', 'COMPLETED']]);
  });

  it('an address that does not answer is named, with what to check (not "fetch failed")', async () => {
    // A port that was free a moment ago: nothing listens there.
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise((r) => srv.close(r));
    const r = tend(pool.dataDir, ['report', 'u@ext:sync', 'heartbeat'], { TEND_SERVER: `http://127.0.0.1:${port}`, TEND_TOKEN: 'x' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`tend: u@ext:sync heartbeat: no answer from http://127.0.0.1:${port} (ECONNREFUSED): check that the daemon runs there`);
  });

  it('turns a realtime external routine whose heartbeats stop into ERROR (Tend cannot restart it)', async () => {
    pool.tendOk('routine', 'add', 'u@ext:feed', '--realtime', '--external', '--heartbeat', '1s', '--grace', '1s');
    reportOk('u@ext:feed', 'start');
    const [run] = runsOf('u@ext:feed');
    // Beating every 100 ms for three seconds, past the grace and three intervals: stays RUNNING.
    // (Straight over HTTP: a CLI start per beat is about as slow as the interval on a busy machine.)
    const until = Date.now() + 3000;
    let lastBeat = 0;
    while (Date.now() < until) {
      lastBeat = Date.now();
      const beat = await pool.http('POST', `/api/external/${encodeURIComponent('u@ext:feed')}/heartbeat`, {});
      expect(beat.status).toBe(200);
      expect(runsOf('u@ext:feed').map((r) => r.status)).toEqual(['RUNNING']);
      await new Promise((r) => setTimeout(r, 100));
    }
    const dead = await waitFor(() => runsOf('u@ext:feed').find((r) => r.status === 'ERROR'), 15_000, 'the silent routine to be ERROR');
    // Not before a whole interval of silence (the daemon stamped the last beat after we sent it).
    expect(Date.now() - lastBeat).toBeGreaterThanOrEqual(1000);
    expect(dead.id).toBe(run!.id);
    expect(dead.reason).toMatch(/heartbeat silent/);
    expect(dead.reason).toMatch(/cannot restart/);
    expect(pool.db.events('routine:silent').map((e) => e.run_id)).toEqual([run!.id]);
    // Nobody restarts it: no new run, no command.
    const t = Date.now();
    await waitFor(() => Date.parse(readState(pool.dataDir)?.lastHeartbeat ?? '') > t + 1000, 10_000, 'a second of passes');
    expect(runsOf('u@ext:feed').length).toBe(1);
    expect(pool.db.commands('u@ext')).toEqual([]);
  });

  it('makes a batch external routine that has not started by its tolerance DELAYED, then runs it when it reports', async () => {
    pool.tendOk('routine', 'add', 'u@ext:late', '--external', '--in', '1s', '--tolerance', '1s', '--retry', 'none');
    const run = await waitFor(() => runsOf('u@ext:late').find((r) => r.status === 'DELAYED'), 15_000, 'the run to be DELAYED');
    expect(pool.db.events('run:delayed').some((e) => e.run_id === run.id && /not started within 1s/.test(e.message))).toBe(true);
    reportOk('u@ext:late', 'start');
    expect(runsOf('u@ext:late').map((r) => [r.id, r.status])).toEqual([[run.id, 'RUNNING']]);
    reportOk('u@ext:late', 'complete');
    expect(runsOf('u@ext:late').map((r) => [r.id, r.status])).toEqual([[run.id, 'COMPLETED']]);
  });

  it('refuses a worker token of another computer, and takes the one of the routine’s own', async () => {
    pool.tendOk('routine', 'add', 'u@ext:guarded', '--external', '--every', '1h');
    const other = pool.token('u@other');
    const own = pool.token('u@ext');
    const path = `/api/external/${encodeURIComponent('u@ext:guarded')}/start`;

    const refused = await pool.http('POST', path, {}, other);
    expect(refused.status).toBe(403);
    expect(refused.body.ok).toBe(false);
    expect(refused.body.error!.message).toMatch(/u@other/);
    expect(runsOf('u@ext:guarded')).toEqual([]);
    // Same through `tend report`, as a script on the other host would call it.
    const viaCli = tend(pool.dataDir, ['report', 'u@ext:guarded', 'start'], { TEND_SERVER: pool.api.url, TEND_TOKEN: other });
    expect(viaCli.code).not.toBe(0);
    expect(viaCli.stderr).toMatch(/u@other/);
    expect(runsOf('u@ext:guarded')).toEqual([]);
    // A worker token cannot report for a routine that does not exist on its computer either way.
    const unknown = await pool.http('POST', `/api/external/${encodeURIComponent('u@ext:nope')}/start`, {}, other);
    expect(unknown.body.ok).toBe(false);

    const ok = tend(pool.dataDir, ['report', 'u@ext:guarded', 'start'], { TEND_SERVER: pool.api.url, TEND_TOKEN: own });
    expect(ok.code, ok.stderr).toBe(0);
    expect(runsOf('u@ext:guarded').map((r) => r.status)).toEqual(['RUNNING']);
    const done = await pool.http('POST', `/api/external/${encodeURIComponent('u@ext:guarded')}/complete`, {}, own);
    expect(done.status).toBe(200);
    expect(runsOf('u@ext:guarded').map((r) => r.status)).toEqual(['COMPLETED']);
  });
});
