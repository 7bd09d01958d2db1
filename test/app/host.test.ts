// Where the app's engine runs: in the app (it owns the data dir, as 'app', with the API), or in
// a live headless daemon the app attaches to over HTTP; and the app takes over when that daemon
// goes away. Real daemons from the built CLI, real data dirs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startHost, type Host } from '../../main/app/host.js';
import { readApiFile } from '../../main/engine/api/auth.js';
import { readPidRecord } from '../../main/engine/daemon/ownership.js';
import { readState } from '../../main/engine/daemon/state.js';
import { settings } from '../../main/engine/settings.js';
import type { EventRow } from '../../main/engine/store/events.js';
import { killTracked, scratch } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';

const hosts: Host[] = [];
const dirs: (() => void)[] = [];
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
  await killTracked();
  for (const remove of dirs.splice(0)) remove();
});
function dataDir(): string {
  const s = scratch('tend-host-');
  dirs.push(s.remove);
  return s.dir;
}
function keep(h: Host): Host {
  hosts.push(h);
  return h;
}

describe('startHost', () => {
  it('runs the engine in the app when nobody owns the data dir: owner "app", API, heartbeat file', async () => {
    const dir = dataDir();
    const host = keep(await startHost({ dataDir: dir, intervalMs: 50 }));
    expect(host.info).toMatchObject({ mode: 'engine', dataDir: dir, enginePid: process.pid });
    expect(readPidRecord(dir)).toMatchObject({ pid: process.pid, kind: 'app' });
    const api = readApiFile(dir)!;
    expect(host.info.url).toBe(api.url);
    const health = (await (await fetch(`${api.url}/health`)).json()) as { ok: boolean };
    expect(health.ok).toBe(true);
    await waitFor(() => readState(dir)?.lastPass, 10_000, 'the heartbeat file');
    expect(readState(dir)).toMatchObject({ pid: process.pid, api: { url: api.url } });
    expect(await host.client.call('routines.list', {})).toEqual([]);

    await host.close();
    expect(existsSync(join(dir, 'daemon.pid'))).toBe(false);
    await expect(fetch(`${api.url}/health`)).rejects.toThrow();
  });

  it('owning, it runs on the settings it is given (what the app reads from its environment)', async () => {
    const dir = dataDir();
    const host = keep(await startHost({ dataDir: dir, settings: settings({ api: false, intervalMs: 250, keepDays: null }) }));
    expect(host.info.url).toBeNull();
    await waitFor(() => readState(dir)?.lastPass, 10_000, 'the heartbeat file');
    expect(readState(dir)).toMatchObject({ api: null, intervalMs: 250, history: { keepDays: null } });
  });

  it('sleep and wake are recorded, and waking runs a pass at once', async () => {
    const dir = dataDir();
    // A long interval: only the nudge can explain a prompt pass.
    const host = keep(await startHost({ dataDir: dir, intervalMs: 60_000, api: false }));
    const events: EventRow[] = [];
    let passes = 0;
    host.client.subscribe({ event: (e) => events.push(e), pass: () => passes++ });
    await waitFor(() => passes >= 1, 10_000, 'the first pass');
    const before = passes;
    host.power('suspend');
    host.power('resume');
    await waitFor(() => passes > before, 5_000, 'a pass after resume');
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['power:suspend', 'power:resume']));
  });

  it('attaches to a live headless daemon over its API instead of running a second scheduler', async () => {
    const dir = dataDir();
    const daemon = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    const host = keep(await startHost({ dataDir: dir }));
    expect(host.info).toMatchObject({ mode: 'attached', enginePid: daemon.pid, url: readApiFile(dir)!.url });
    expect(readPidRecord(dir)).toMatchObject({ pid: daemon.pid, kind: 'daemon' });

    const events: EventRow[] = [];
    let passes = 0;
    host.client.subscribe({ event: (e) => events.push(e), pass: () => passes++ });
    // The stream is live once it carries the daemon's pass reports (one every 100 ms here).
    await waitFor(() => passes > 0, 10_000, 'a pass report over the event stream');
    await host.client.call('routines.create', { id: 'me@host:reports/daily', command: 'true', runtimes: ['07:00'], tz: 'UTC' });
    expect(await host.client.call('routines.list', {})).toMatchObject([{ id: 'me@host:reports/daily' }]);
    // Events from the daemon's scheduler arrive over its event stream.
    await waitFor(() => events.find((e) => e.routineId === 'me@host:reports/daily'), 10_000, "the daemon's event about the new routine");
    await expect(host.client.call('routines.show', { id: 'me@host:none' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('refuses clearly when the owning daemon serves no API', async () => {
    const dir = dataDir();
    const daemon = await new Daemon(dir, { TEND_API: 'off', TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    await expect(startHost({ dataDir: dir, attachTimeoutMs: 300 })).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining(`daemon pid ${daemon.pid} owns ${dir} but serves no HTTP API`) });
  });

  it('an attached app hears when its daemon is gone, and can then run the engine itself', async () => {
    const dir = dataDir();
    const daemon = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    const attached = keep(await startHost({ dataDir: dir, ownerCheckMs: 50 }));
    let gone = false;
    attached.onOwnerGone(() => (gone = true));
    process.kill(daemon.pid, 'SIGKILL');
    await daemon.exited;
    await waitFor(() => gone, 5_000, 'the owner-gone signal');
    await attached.close();
    const own = keep(await startHost({ dataDir: dir, intervalMs: 50 }));
    expect(own.info.mode).toBe('engine');
    expect(readPidRecord(dir)).toMatchObject({ pid: process.pid, kind: 'app' });
  });
});
