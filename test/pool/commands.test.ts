// Commands addressed to a computer expire (TEND_COMMAND_TTL_MS shortens the 60 s for the test) and
// a stale command is never run; routines addressed to an offline worker, or to one that vanished
// so lately that its start command lapsed unfetched, wait (DELAYED, not ERROR) and run on its return.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, killTracked, lines, Pool, POOL_FIXTURES, readState, scratch, waitFor } from './harness.js';

const MARK = join(POOL_FIXTURES, 'mark.sh');
const FAR = ['--at', '2099-01-01T00:00', '--tz', 'UTC'];

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

describe('commands', () => {
  it('never runs a start command that expired while its worker was stopped: the run waits DELAYED and is sent afresh on return', async () => {
    box = scratch('tend-expiry-');
    const TTL = 1500;
    pool = await Pool.start(box.dir, { env: { TEND_COMMAND_TTL_MS: String(TTL) } });
    const w = pool.worker('u@w1');
    const stale = join(box.dir, 'stale');
    pool.tendOk('routine', 'add', 'u@w1:stale', ...FAR, '--tolerance', '1s', '--retry', 'none', '--', 'sh', MARK, stale, 'stale');

    let since = Date.now();
    w.start();
    await pool.seen(w, since);
    await w.kill('SIGKILL');
    // Seen a moment ago, so not offline yet: the daemon sends the start command, nobody fetches it.
    pool.tendOk('routine', 'run', 'u@w1:stale', '--no-wait');
    const cmd = await waitFor(() => pool!.db.commands('u@w1').find((c) => c.kind === 'start'), 10_000, 'the start command to be queued');
    expect(cmd.expires_at - cmd.created_at).toBe(TTL);
    // The run never started: it waits (DELAYED, it is past its 1 s tolerance), not ERROR.
    const run = await waitFor(() => pool!.db.runs('u@w1:stale').find((r) => r.status === 'DELAYED'), 15_000, 'the run to wait for its worker');
    expect(run.reason).toMatch(/start command expired/);
    expect(run.reason).toContain('u@w1');
    expect(run.reason).toMatch(/1\.5 s/);
    expect(pool.db.commands('u@w1').find((c) => c.id === cmd.id)!.fate).toBe('expired');
    expect(pool.db.all(`SELECT * FROM ledger WHERE ref_id = ?`, run.id)).toEqual([]);
    const unsent = pool.db.all<{ message: string }>(`SELECT message FROM events WHERE type = 'run:unsent' AND run_id = ?`, run.id);
    expect(unsent.length).toBe(1);
    expect(unsent[0]!.message).toMatch(/never ran/);
    // While the worker stays unheard (the 30 s online rule still counts it), nothing more is sent.
    await waitFor(() => pool!.db.events('backend:paused').find((e) => /u@w1 did not fetch its start command/.test(e.message)), 10_000, 'the pool backend to pause');
    const waitingSince = Date.now();
    await waitFor(() => Date.now() - waitingSince > 2 * TTL || undefined, 10_000, 'two TTLs to pass');
    expect(pool.db.commands('u@w1').filter((c) => c.kind === 'start').length).toBe(1);
    expect(pool.db.runs('u@w1:stale').find((r) => r.id === run.id)!.status).toBe('DELAYED');

    // Back again: the same run is sent with a new command and runs once; the stale command never.
    since = Date.now();
    w.start();
    await pool.seen(w, since);
    await waitFor(() => pool!.db.runs('u@w1:stale').find((r) => r.id === run.id)?.status === 'COMPLETED', 20_000, 'the waiting run to complete once its worker is back');
    expect(lines(stale).length).toBe(1);
    const starts = pool.db.commands('u@w1').filter((c) => c.kind === 'start');
    expect(starts.length).toBe(2);
    const after = starts.find((c) => c.id === cmd.id)!;
    expect(after.fate).toBe('expired');
    expect(after.fetched_at).toBeNull();
    expect(starts.find((c) => c.id !== cmd.id)!.fate).toBe('fetched');
    const runs = pool.db.all<{ id: string; status: string; attempt: number }>(`SELECT id, status, attempt FROM runs WHERE routine_id = 'u@w1:stale'`);
    const evs = pool.db.all<{ type: string; message: string; run_id: string }>(`SELECT type, message, run_id FROM events WHERE routine_id = 'u@w1:stale' ORDER BY id`);
    expect(runs.map((r) => [r.id, r.status, r.attempt]), JSON.stringify(evs, null, 1)).toEqual([[run.id, 'COMPLETED', 1]]);
  });

  it('keeps a realtime routine whose start command expired unfetched STARTING, and starts that instance once its worker is back', async () => {
    box = scratch('tend-expiry-rt-');
    const TTL = 1500;
    pool = await Pool.start(box.dir, { env: { TEND_COMMAND_TTL_MS: String(TTL) } });
    const w = pool.worker('u@w1');
    const marker = join(box.dir, 'feed');
    const release = join(box.dir, 'release');
    let since = Date.now();
    w.start();
    await pool.seen(w, since);
    await w.kill('SIGKILL');
    pool.tendOk('routine', 'add', 'u@w1:feed', '--realtime', '--', 'sh', MARK, marker, 'feed', release);
    const cmd = await waitFor(() => pool!.db.commands('u@w1').find((c) => c.kind === 'start' && c.fate === 'expired'), 15_000, 'the start command to expire');
    const unsent = await waitFor(() => pool!.db.events('run:unsent').find((e) => e.routine_id === 'u@w1:feed'), 10_000, 'the instance to be put back to wait');
    await waitFor(() => pool!.db.events('backend:paused').find((e) => /u@w1 did not fetch its start command/.test(e.message)), 10_000, 'the pool backend to pause');
    expect(pool.db.runs('u@w1:feed').map((r) => [r.id, r.status])).toEqual([[unsent.run_id, 'STARTING']]);
    expect(pool.db.commands('u@w1').filter((c) => c.kind === 'start').length).toBe(1);

    since = Date.now();
    w.start();
    await pool.seen(w, since);
    await waitFor(() => pool!.db.runs('u@w1:feed').find((r) => r.id === unsent.run_id)?.status === 'RUNNING', 20_000, 'the same instance to run once the worker is back');
    await waitFor(() => lines(`${marker}.start`).length > 0 || undefined, 10_000, 'the job to start');
    expect(lines(`${marker}.start`)).toEqual(['start feed w1']);
    expect(pool.db.runs('u@w1:feed').length).toBe(1);
    const after = pool.db.commands('u@w1').find((c) => c.id === cmd.id)!;
    expect([after.fate, after.fetched_at]).toEqual(['expired', null]);
    pool.tendOk('routine', 'stop', 'u@w1:feed');
    await waitFor(() => pool!.db.runs('u@w1:feed')[0]?.status === 'STOPPED', 10_000, 'the instance to stop');
  });

  it('stops a run waiting for a worker whose start command expired: it is never sent again', async () => {
    box = scratch('tend-expiry-stop-');
    const TTL = 1500;
    pool = await Pool.start(box.dir, { env: { TEND_COMMAND_TTL_MS: String(TTL) } });
    const w = pool.worker('u@w1');
    const marker = join(box.dir, 'job');
    let since = Date.now();
    w.start();
    await pool.seen(w, since);
    await w.kill('SIGKILL');
    pool.tendOk('routine', 'add', 'u@w1:job', ...FAR, '--', 'sh', MARK, marker, 'job');
    pool.tendOk('routine', 'run', 'u@w1:job', '--no-wait');
    const unsent = await waitFor(() => pool!.db.events('run:unsent').find((e) => e.routine_id === 'u@w1:job'), 15_000, 'the run to be put back to wait');
    expect(pool.db.runs('u@w1:job').find((r) => r.id === unsent.run_id)!.status).toBe('PENDING');
    pool.tendOk('routine', 'stop', 'u@w1:job');
    expect(pool.db.runs('u@w1:job').map((r) => [r.id, r.status])).toEqual([[unsent.run_id, 'CANCELLED']]);

    since = Date.now();
    w.start();
    await pool.seen(w, since);
    pool.tendOk('routine', 'run', 'u@w1:job', '--no-wait');
    await waitFor(() => pool!.db.runs('u@w1:job').some((r) => r.status === 'COMPLETED'), 20_000, 'a new run to complete');
    expect(lines(marker).length).toBe(1);
    expect(pool.db.runs('u@w1:job').find((r) => r.id === unsent.run_id)!.status).toBe('CANCELLED');
    expect(pool.db.commands('u@w1').filter((c) => c.kind === 'start').length).toBe(2);
  });

  it('keeps a routine of a worker that never connected DELAYED, naming the worker, and runs it once the worker comes', async () => {
    box = scratch('tend-offline-');
    pool = await Pool.start(box.dir);
    const marker = join(box.dir, 'marker');
    pool.tendOk('routine', 'add', 'u@ghost:job', ...FAR, '--tolerance', '1s', '--', 'sh', MARK, marker, 'ghost');
    pool.tendOk('routine', 'run', 'u@ghost:job', '--no-wait');
    const run = await waitFor(() => pool!.db.runs('u@ghost:job').find((r) => r.status === 'DELAYED'), 15_000, 'the run to be DELAYED');
    expect(run.reason).toMatch(/u@ghost/);
    expect(run.reason).toMatch(/never connected/);
    expect(pool.db.commands('u@ghost')).toEqual([]);

    const w = pool.worker('u@ghost');
    w.start();
    await waitFor(() => pool!.db.runs('u@ghost:job').find((r) => r.id === run.id)?.status === 'COMPLETED', 20_000, 'the delayed run to complete once the worker is there');
    expect(lines(marker).length).toBe(1);
    expect(pool.db.runs('u@ghost:job').length).toBe(1);
  });

  it('makes the routines of a worker gone silent DELAYED, not ERROR, with a reason naming it', async () => {
    box = scratch('tend-silent-');
    pool = await Pool.start(box.dir, { env: { TEND_WORKER_OFFLINE_MS: '3000' } });
    const w = pool.worker('u@w2');
    const marker = join(box.dir, 'marker');
    pool.tendOk('routine', 'add', 'u@w2:job', ...FAR, '--tolerance', '1s', '--', 'sh', MARK, marker, 'w2');
    pool.tendOk('routine', 'add', 'u@w2:feed', '--realtime', '--', 'sh', '-c', 'sleep 600');
    const since = Date.now();
    w.start();
    await pool.seen(w, since);
    // A connected worker waiting in its long poll is not offline, even past the threshold.
    const feed = await waitFor(() => pool!.db.runs('u@w2:feed').find((r) => r.status === 'RUNNING'), 20_000, 'the realtime routine to run on w2');
    const mark = pool.db.get<{ id: number }>(`SELECT MAX(id) AS id FROM events`)!.id;
    const seen = pool.db.worker('u@w2')!.last_seen!;
    await waitFor(() => pool!.db.worker('u@w2')!.last_seen! > seen + 3000, 15_000, 'w2 to be seen again while connected');
    pool.tendOk('routine', 'run', 'u@w2:job', '--no-wait');
    await waitFor(() => pool!.db.runs('u@w2:job').some((r) => r.status === 'COMPLETED'), 20_000, 'a run on the connected worker');
    expect(pool.db.events('backend:paused').filter((e) => e.id > mark)).toEqual([]);

    await w.kill('SIGKILL');
    // Not offline yet (seen within the threshold): wait until it is, so the next run waits.
    await waitFor(() => Date.now() - pool!.db.worker('u@w2')!.last_seen! > 4000, 15_000, 'w2 to fall silent');
    pool.tendOk('routine', 'run', 'u@w2:job', '--no-wait');
    const run = await waitFor(() => pool!.db.runs('u@w2:job').find((r) => r.status === 'DELAYED'), 15_000, 'the run to be DELAYED');
    expect(run.reason).toMatch(/worker u@w2 offline since/);
    // The realtime instance on the silent worker is not declared dead either.
    expect(pool.db.runs('u@w2:feed').find((r) => r.id === feed.id)!.status).toBe('RUNNING');
    // Still waiting a while later: a missing host is not a statement about the routine.
    await waitFor(() => pool!.db.events('backend:paused').find((e) => e.message.includes('u@w2')), 5_000, 'the pool stage of w2 to pause');
    const t = Date.now();
    await waitFor(() => Date.parse(readState(pool!.dataDir)?.lastHeartbeat ?? '') > t + 2000, 10_000, 'two more seconds of passes');
    expect(pool.db.runs('u@w2:job').map((r) => r.status)).toEqual(['COMPLETED', 'DELAYED']);
    expect(pool.db.runs().filter((r) => r.status === 'ERROR')).toEqual([]);
    expect(lines(marker).length).toBe(1);
  });

  it('ends a run whose start command was fetched and never reported, once the worker is back talking without it', async () => {
    box = scratch('tend-forgotten-');
    const TTL = 1500; // the worker has 2 x TTL to report what it fetched
    pool = await Pool.start(box.dir, { env: { TEND_COMMAND_TTL_MS: String(TTL) } });
    pool.tendOk('routine', 'add', 'u@w1:lost', ...FAR, '--retry', 'none', '--', 'true');
    const token = pool.token('u@w1');
    // A worker that takes its commands and then loses them (killed between fetch and launch).
    const poll = () => pool!.http<{ commands: { id: number }[] }>('GET', '/api/worker/commands?wait=0', undefined, token);
    await poll();
    pool.tendOk('routine', 'run', 'u@w1:lost', '--no-wait');
    const fetched = await waitFor(async () => (await poll()).body.value!.commands[0], 10_000, 'the start command to be fetched', 100);
    const cmd = pool.db.commands('u@w1').find((c) => c.id === fetched.id)!;
    expect(cmd.fate).toBe('fetched');

    // Silent past the grace: it may be running it, so the run waits.
    await waitFor(() => Date.now() - cmd.fetched_at! > 2 * TTL + 1500, 10_000, 'the grace to pass');
    expect(pool.db.runs('u@w1:lost').map((r) => r.status)).toEqual(['STARTING']);

    // Talking again without a word about it: it does not have it.
    let polling = true;
    const keepAlive = (async () => {
      while (polling) {
        await poll();
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      const run = await waitFor(() => pool!.db.runs('u@w1:lost').find((r) => r.status === 'ERROR'), 15_000, 'the run to end');
      expect(run.reason).toMatch(/fetched the start command .* but never reported the run/);
    } finally {
      polling = false;
      await keepAlive;
    }
  });
});
