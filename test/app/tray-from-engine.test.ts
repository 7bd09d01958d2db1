// The tray and the notifications read what the engine really produces: a failed routine and a
// dependent left waiting until DELAYED, through a real Scheduler and Store.
import { afterEach, describe, expect, it } from 'vitest';
import { NotificationPolicy } from '../../main/app/notify-policy.js';
import { trayModel } from '../../main/app/tray-model.js';
import { listRoutines } from '../../main/engine/ops/views.js';
import { Fixture, MIN, SEC, full } from '../helpers/engine-fixture.js';

let f: Fixture | undefined;
afterEach(() => {
  f?.close();
  f = undefined;
});

describe('tray and notifications from engine state', () => {
  it('go red for a failed routine, count the dependent it left DELAYED, and notify each once', async () => {
    f = new Fixture();
    const policy = new NotificationPolicy({ groupWindowMs: 5 * SEC });
    const notices: string[] = [];
    f.scheduler.bus.on('event', (e) => {
      policy.offer(e, f!.now());
    });
    f.define({ id: 'fetch', cron: '5 9 * * *' });
    f.define({ id: 'parse', cron: '5 9 * * *', after: [full('fetch')], tolerance: '3m' });
    f.define({ id: 'report', cron: '0 12 * * *' });

    f.advance(5 * MIN);
    await f.pass();
    expect(trayModel(listRoutines(f.store, f.now()), false, { startAtLogin: false })).toMatchObject({ colour: 'green', tooltip: 'Tend — 3 routines: 1 running' });

    f.backend.finish(f.only('fetch').id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    f.advance(5 * SEC);
    notices.push(...policy.flush(f.now()).map((n) => `${n.title} → ${n.target}`));

    f.advance(3 * MIN);
    await f.pass();
    f.advance(5 * SEC);
    notices.push(...policy.flush(f.now()).map((n) => `${n.title} → ${n.target}`));

    const m = trayModel(listRoutines(f.store, f.now()), false, { startAtLogin: false });
    expect(m.colour).toBe('red');
    expect(m.tooltip).toBe('Tend — 3 routines: 1 failed, 1 delayed');
    expect(m.items.filter((i) => i.kind === 'submenu').map((i) => i.label)).toEqual(['fetch']);
    expect(notices).toEqual([`fetch failed → #/routine/${encodeURIComponent(full('fetch'))}`, `parse is delayed → #/routine/${encodeURIComponent(full('parse'))}`]);

    // Nothing new: the DELAYED run staying late does not notify again.
    f.advance(10 * MIN);
    await f.pass();
    f.advance(5 * SEC);
    expect(policy.flush(f.now())).toEqual([]);
  });
});
