// A start command that lapsed unfetched (its worker vanished just before, still counted online):
// the run never ran, so it goes back to wait with no attempt spent, nothing more is sent until the
// worker is heard from, and then the same run is sent as a new command. Real store, real pool backend.
import { afterEach, describe, expect, it } from 'vitest';
import { createPoolBackend } from '../../../main/engine/pool/pool-backend.js';
import { DEFAULT_SETTINGS, settings, type Settings } from '../../../main/engine/settings.js';
import { Fixture, HOUR, MIN, SEC, T0 } from '../../helpers/engine-fixture.js';

const W = 'u@w1';
let f: Fixture;
afterEach(() => f?.close());

const COMMAND_TTL_MS = DEFAULT_SETTINGS.commandTtlMs;

function withPool(s: Settings = DEFAULT_SETTINGS): Fixture {
  return new Fixture({ makeBackend: (name, fx) => (name === `pool:${W}` ? createPoolBackend(W, fx.store, fx.clock, () => undefined, s) : undefined) });
}

const starts = () => f.store.pool.recentCommands().filter((c) => c.kind === 'start').reverse();

describe('a start command that expired unfetched', () => {
  it('lives as long as the settings say (TEND_COMMAND_TTL_MS), and the reason says how long', async () => {
    f = withPool(settings({ commandTtlMs: 5 * MIN }));
    f.define({ id: `${W}:r`, cron: '0 * * * *', retry: 'none' });
    f.clock.set(T0 + HOUR);
    f.store.pool.seen(W, f.now(), {});
    await f.pass();
    const run = f.only(`${W}:r`);
    expect(starts()[0]!.expiresAt).toBe(T0 + HOUR + 5 * MIN);
    f.store.pool.seen(W, T0 + HOUR + 5 * MIN - 10 * SEC, {});
    f.clock.set(T0 + HOUR + 5 * MIN + SEC);
    await f.pass();
    expect(f.run(run.id).reason).toBe(`the start command expired: worker ${W} did not fetch it within 300 s; it is sent again once the worker is heard from`);
  });

  it('puts the run back to wait (PENDING, DELAYED once late) and sends it afresh once the worker is heard from', async () => {
    f = withPool();
    f.define({ id: `${W}:r`, cron: '0 * * * *', retry: 'none' });
    f.clock.set(T0 + HOUR);
    f.store.pool.seen(W, f.now(), {});
    await f.pass();
    const run = f.only(`${W}:r`);
    expect(run.status).toBe('STARTING');
    const [first] = starts();
    expect(first!.expiresAt).toBe(T0 + HOUR + COMMAND_TTL_MS);

    // Heard from once more before the command lapses, never fetching it: still online when it does.
    f.store.pool.seen(W, T0 + HOUR + COMMAND_TTL_MS - 10 * SEC, {});
    f.clock.set(first!.expiresAt + SEC);
    await f.pass();
    expect(f.run(run.id)).toMatchObject({ status: 'PENDING', attempt: 1, endedAt: null });
    expect(f.run(run.id).reason).toMatch(new RegExp(`^the start command expired: worker ${W} did not fetch it`));
    expect(f.store.ledger.count()).toBe(0);
    expect(f.events('run:unsent').map((e) => e.runId)).toEqual([run.id]);
    expect(f.events('run:failed')).toEqual([]);
    expect(f.events('backend:paused').map((e) => e.message).join('\n')).toContain(`worker ${W} did not fetch its start command`);
    expect(starts().length).toBe(1);

    // Past its tolerance while the worker stays away: DELAYED with the reason, still one command.
    f.advance(5 * MIN);
    await f.pass();
    expect(f.run(run.id).status).toBe('DELAYED');
    expect(f.run(run.id).reason).toMatch(new RegExp(`worker ${W} did not fetch`));
    expect(starts().length).toBe(1);

    // Heard from again: the same run, attempt 1, with a new command; the lapsed one stays expired.
    f.store.pool.seen(W, f.now(), {});
    await f.pass();
    expect(f.runs(`${W}:r`).map((r) => [r.id, r.status, r.attempt, r.reason])).toEqual([[run.id, 'STARTING', 1, null]]);
    const [old, fresh] = starts();
    expect([old!.id, old!.fate, old!.fetchedAt]).toEqual([first!.id, 'expired', null]);
    expect(fresh!.fate).toBe('queued');
    expect((fresh!.payload.spec as { runId: string }).runId).toBe(run.id);
  });
});
