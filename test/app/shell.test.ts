// The desktop app booted for real — engine, API, IPC handlers, tray, notifications, power events,
// quit — with Electron replaced at its one adapter by a recording fake.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { appAssets } from '../../main/app/assets.js';
import { IPC_CHANNELS, pushChannel } from '../../main/app/ipc-channels.js';
import { CONTENT_SECURITY_POLICY } from '../../main/app/security.js';
import type { RunningApp } from '../../main/app/shell.js';
import { localComputer } from '../../main/engine/domain/schema.js';
import type { EventRow } from '../../main/engine/store/events.js';
import { readPidRecord } from '../../main/engine/daemon/ownership.js';
import { killTracked } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import * as fake from './fake-electron.js';

vi.mock('electron', async () => (await import('./fake-electron.js')).electron);

const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
const assets = appAssets(REPO);
const PAGE = `${pathToFileURL(assets.rendererIndex).href}#/today`;

let dirs: string[] = [];
let running: RunningApp | null = null;
const scratch = (p: string) => {
  const d = mkdtempSync(join(tmpdir(), p));
  dirs.push(d);
  return d;
};

async function boot(o: { argv?: string[]; notify?: { groupWindowMs?: number }; dataDir?: string } = {}) {
  const { startApp } = await import('../../main/app/shell.js');
  const dataDir = o.dataDir ?? scratch('tend-shell-data-');
  running = await startApp({ dataDir, argv: o.argv ?? ['electron', '.'], assets, intervalMs: 50, env: { XDG_CONFIG_HOME: scratch('tend-shell-config-') }, notify: o.notify ?? { groupWindowMs: 50 }, log: () => undefined });
  return { app: running!, dataDir };
}

const win = () => fake.windows[0]!;
const fromWindow = () => ({ sender: win().webContents, url: PAGE });
const ok = async (channel: string, args: unknown = {}) => {
  const r = (await fake.invoke(channel, args, fromWindow())) as { ok: boolean; value?: any; error?: unknown };
  if (!r.ok) throw new Error(`${channel}: ${JSON.stringify(r.error)}`);
  return r.value;
};
/** Click a tray menu item by its label path (submenus included). */
function clickTray(...path: string[]): void {
  let items = fake.trays[0]!.menu!.template;
  for (const [i, label] of path.entries()) {
    const item = items.find((it: { label?: string }) => it.label === label);
    if (!item) throw new Error(`no tray item ${label} in ${items.map((x: { label?: string }) => x.label).join(' | ')}`);
    if (i === path.length - 1) item.click();
    else items = item.submenu;
  }
}
const trayLabels = () => fake.trays[0]!.menu!.template.map((i: { label?: string; type?: string }) => i.label ?? `(${i.type})`);

beforeEach(() => fake.reset(scratch('tend-shell-userdata-')));
afterEach(async () => {
  await running?.shutdown();
  running = null;
  await killTracked();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the desktop app under a stand-in Electron', () => {
  it('registers one IPC handler per contract channel (and app:info), checking the sender', async () => {
    const { dataDir } = await boot();
    expect([...fake.state.handlers.keys()].sort()).toEqual([...IPC_CHANNELS].sort());

    expect(await ok('routines.list')).toEqual([]);
    expect(await ok('app:info')).toMatchObject({ mode: 'engine', dataDir, enginePid: process.pid, url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    const refused = { ok: false, error: { code: 'FORBIDDEN', message: 'IPC from an untrusted sender' } };
    expect(await fake.invoke('routines.list', {}, { sender: {}, url: PAGE })).toEqual(refused);
    expect(await fake.invoke('routines.list', {}, { sender: win().webContents, url: 'https://evil.example/' })).toEqual(refused);
    expect(await fake.invoke('routines.list', {}, { sender: win().webContents, url: PAGE, top: false })).toEqual(refused);
    expect(await fake.invoke('routines.list', {}, { sender: win().webContents, url: null })).toEqual(refused);
    // Arguments are validated with the shared schemas.
    expect(await fake.invoke('routines.show', { id: 'nope' }, fromWindow())).toMatchObject({ ok: false, error: { code: 'INVALID', issues: [{ path: 'id' }] } });
  });

  it('opens one locked-down window on the built renderer, and closing it keeps Tend in the tray', async () => {
    await boot();
    expect(fake.windows).toHaveLength(1);
    expect(win().options.webPreferences).toEqual({
      preload: join(REPO, 'dist', 'preload', 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    });
    expect(win().loaded).toEqual({ file: assets.rendererIndex, options: { hash: '/today' } });
    win().emit('ready-to-show');
    expect(win().visible).toBe(true);

    expect(win().userClose()).toBe(false);
    expect(win().visible).toBe(false);
    expect(win().destroyed).toBe(false);
    // A second launch shows the same window again.
    fake.app.emit('second-instance', {}, ['tend']);
    expect(win().visible).toBe(true);
    expect(fake.windows).toHaveLength(1);
  });

  it('denies navigation, new windows, webviews and permissions, and sets the CSP', async () => {
    await boot();
    const wc = win().webContents;
    expect(wc.openHandler!({ url: 'https://example.com' })).toEqual({ action: 'deny' });
    const away = fake.cancellable();
    wc.emit('will-navigate', away, 'https://example.com/');
    expect(away.defaultPrevented).toBe(true);
    const route = fake.cancellable();
    wc.emit('will-navigate', route, `${pathToFileURL(assets.rendererIndex).href}#/jobs`);
    expect(route.defaultPrevented).toBe(false);
    const redirect = fake.cancellable();
    wc.emit('will-redirect', redirect, 'file:///etc/passwd');
    expect(redirect.defaultPrevented).toBe(true);
    const frame = fake.cancellable({ url: 'https://ads.example/' });
    wc.emit('will-frame-navigate', frame);
    expect(frame.defaultPrevented).toBe(true);
    const webview = fake.cancellable();
    wc.emit('will-attach-webview', webview);
    expect(webview.defaultPrevented).toBe(true);

    // Only writing to the clipboard ("Copy the command"), only for the app's own page, top frame.
    const granted: boolean[] = [];
    const own = { requestingUrl: PAGE.replace('#/today', '#/health'), isMainFrame: true };
    fake.state.permissionHandler!(wc, 'notifications', (g: boolean) => granted.push(g), own);
    fake.state.permissionHandler!(wc, 'clipboard-sanitized-write', (g: boolean) => granted.push(g), own);
    fake.state.permissionHandler!(wc, 'clipboard-sanitized-write', (g: boolean) => granted.push(g), { requestingUrl: 'https://example.com/', isMainFrame: true });
    fake.state.permissionHandler!(wc, 'clipboard-sanitized-write', (g: boolean) => granted.push(g), { ...own, isMainFrame: false });
    expect(granted).toEqual([false, true, false, false]);
    expect(fake.state.permissionCheck!(wc, 'clipboard-read', 'file:///', own)).toBe(false);
    expect(fake.state.permissionCheck!(wc, 'clipboard-sanitized-write', 'file:///', own)).toBe(true);
    expect(fake.state.permissionCheck!(wc, 'clipboard-sanitized-write', 'file:///', { requestingUrl: 'file:///tmp/evil.html', isMainFrame: true })).toBe(false);

    let headers: Record<string, string[]> = {};
    fake.state.headersHandler!({ responseHeaders: { 'content-security-policy': ["default-src *"], 'x-other': 'kept' } }, (r: { responseHeaders: Record<string, string[]> }) => (headers = r.responseHeaders));
    expect(headers).toEqual({ 'x-other': ['kept'], 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] });
  });

  it("puts Chromium's profile in its own folder, not the data dir, before the single-instance lock and `ready`", async () => {
    const { dataDir } = await boot();
    const profile = join(fake.state.appData, 'tend-desktop');
    expect(fake.state.userData).toBe(profile);
    expect(fake.state.calls.slice(0, 3)).toEqual([`setPath userData ${profile}`, 'requestSingleInstanceLock', 'whenReady']);
    expect(profile.startsWith(dataDir)).toBe(false);
  });

  it('starts hidden with --hidden: no window until asked for', async () => {
    await boot({ argv: ['tend', '--hidden'] });
    expect(fake.windows).toHaveLength(0);
    expect(fake.trays).toHaveLength(1);
    // Another hidden launch (login) shows nothing; a person launching it does.
    fake.app.emit('second-instance', {}, ['tend', '--hidden']);
    expect(fake.windows).toHaveLength(0);
    fake.app.emit('second-instance', {}, ['tend']);
    expect(fake.windows).toHaveLength(1);
  });

  it('a second instance hands over to the first and quits', async () => {
    fake.state.lock = false;
    const { startApp } = await import('../../main/app/shell.js');
    expect(await startApp({ dataDir: scratch('tend-shell-second-'), assets })).toBeNull();
    expect(fake.state.quitCalls).toBe(1);
    expect(fake.state.handlers.size).toBe(0);
  });

  it('pushes engine events to the page; a failure turns the tray red, notifies, and the click opens the routine', async () => {
    await boot();
    win().emit('ready-to-show');
    const id = `${localComputer()}:tests/broken`;
    await ok('routines.create', { id, command: 'false', at: '2099-01-01T00:00', tz: 'UTC', retry: 'none' });
    await ok('routines.run', { id });

    // Notifications wait out a 5 s grouping window after the failure; a loaded machine needs the rest.
    await waitFor(() => fake.notifications.length > 0, 30_000, 'a notification');
    const note = fake.notifications[0]!;
    expect(note.options).toMatchObject({ title: 'tests/broken failed', body: 'failed: exit 1' });
    expect(note.shown).toBe(true);
    const pushed = () => win().webContents.sent.filter((s) => s.channel === pushChannel('event')).map((s) => (s.payload as EventRow).type);
    // Events written by calls (created, requested) as well as by the pass; the page hears them
    // as the client tails the events table, which may be a moment after the notification.
    // (`false` can exit before any pass sees it running, so run:running is not asked for.)
    const wanted = ['routine:created', 'run:requested', 'run:submitted', 'run:failed'];
    await waitFor(() => wanted.every((t) => pushed().includes(t)), 10_000, `pushed events ${wanted.join(', ')}`);
    expect(win().webContents.sent.some((s) => s.channel === pushChannel('pass'))).toBe(true);

    await waitFor(() => fake.trays[0]!.tooltip.includes('1 failed'), 10_000, 'the tray to count the failure');
    expect(fake.trays[0]!.image).toEqual({ path: assets.trayIcon('red') });
    expect(trayLabels()).toEqual(['Open Tend', '(separator)', 'Failed today (1)', 'tests/broken', '(separator)', 'Pause scheduling (observe-only)', 'Start at login', '(separator)', 'Quit Tend']);

    win().hide();
    note.emit('click');
    expect(win().visible).toBe(true);
    expect(win().webContents.scripts).toEqual([`location.hash = ${JSON.stringify(`#/routine/${encodeURIComponent(id)}`)}`]);

    // Restart from the tray: the routine runs again (and fails again, it is `false`).
    const runsBefore = ((await ok('routines.show', { id })) as { history: unknown[] }).history.length;
    clickTray('tests/broken', 'Restart');
    await waitFor(async () => ((await ok('routines.show', { id })) as { history: unknown[] }).history.length > runsBefore, 10_000, 'a restarted run');
  });

  it('pauses scheduling (every schedule observe-only) and resumes exactly what it paused', async () => {
    await boot();
    await ok('routines.create', { id: `${localComputer()}:a/one`, command: 'true', at: '2099-01-01T00:00', tz: 'UTC', schedule: 'work' });
    await ok('routines.create', { id: `${localComputer()}:b/two`, command: 'true', at: '2099-01-01T00:00', tz: 'UTC', schedule: 'watch' });
    await ok('schedules.setMode', { name: 'watch', mode: 'observe' });
    await running!.tray.refresh();

    clickTray('Pause scheduling (observe-only)');
    await waitFor(() => trayLabels().includes('Resume scheduling'), 10_000, 'Resume in the tray');
    expect(await ok('schedules.list')).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'work', mode: 'observe' }), expect.objectContaining({ name: 'watch', mode: 'observe' })]));
    expect(fake.trays[0]!.tooltip).toContain('scheduling paused (observe-only)');
    expect(JSON.parse(readFileSync(join(fake.state.userData, 'tend-app.json'), 'utf8'))).toEqual({ pausedSchedules: ['work'] });

    clickTray('Resume scheduling');
    await waitFor(() => trayLabels().includes('Pause scheduling (observe-only)'), 10_000, 'Pause in the tray again');
    expect(await ok('schedules.list')).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'work', mode: 'active' }), expect.objectContaining({ name: 'watch', mode: 'observe' })]));
  });

  it('toggles start at login from the tray (an XDG autostart entry on Linux)', async () => {
    if (process.platform !== 'linux') return;
    const { app } = await boot();
    expect(app.login.enabled()).toBe(false);
    clickTray('Start at login');
    await waitFor(() => fake.trays[0]!.menu!.template.find((i: { label?: string }) => i.label === 'Start at login')?.checked === true, 10_000, 'the checkbox');
    expect(app.login.enabled()).toBe(true);
    clickTray('Start at login');
    await waitFor(() => fake.trays[0]!.menu!.template.find((i: { label?: string }) => i.label === 'Start at login')?.checked === false, 10_000, 'the checkbox off');
  });

  it('waking from sleep runs a pass and is recorded', async () => {
    await boot();
    fake.powerMonitor.emit('suspend');
    fake.powerMonitor.emit('resume');
    const events = await waitFor(async () => {
      const recent = (await ok('events.recent', { limit: 50 })) as EventRow[];
      return recent.some((e) => e.type === 'power:resume') && recent.some((e) => e.type === 'power:suspend') ? recent : null;
    }, 10_000, 'power events');
    expect(events.length).toBeGreaterThan(0);
  });

  it('attaches to a running daemon (and says so), and takes over when that daemon goes away', async () => {
    const dataDir = scratch('tend-shell-daemon-');
    const daemon = await new Daemon(dataDir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
    await boot({ dataDir });
    expect(await ok('app:info')).toMatchObject({ mode: 'attached', enginePid: daemon.pid });
    expect(fake.trays[0]!.tooltip).toContain('attached to the daemon');
    await ok('routines.create', { id: `${localComputer()}:kept/across`, command: 'true', at: '2099-01-01T00:00', tz: 'UTC' });

    process.kill(daemon.pid, 'SIGKILL');
    await daemon.exited;
    await waitFor(async () => ((await ok('app:info')) as { mode: string }).mode === 'engine', 15_000, 'the app to take over');
    expect(readPidRecord(dataDir)).toMatchObject({ pid: process.pid, kind: 'app' });
    // Same data dir, same routines; the page reloads onto the new engine.
    expect(await ok('routines.list')).toMatchObject([{ id: `${localComputer()}:kept/across` }]);
    expect(win().webContents.reloads).toBe(1);
  });

  it('a nudge (SIGUSR2) while the host starts does not kill the app; it reaches the engine once there is one', async () => {
    const { startApp } = await import('../../main/app/shell.js');
    const dataDir = scratch('tend-shell-nudge-');
    const booting = startApp({ dataDir, argv: ['electron', '.'], assets, intervalMs: 50, env: { XDG_CONFIG_HOME: scratch('tend-shell-config-') }, log: () => undefined });
    // Delivered while startApp awaits Electron and claims the data dir (the default action kills).
    process.kill(process.pid, 'SIGUSR2');
    running = await booting;
    expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(true);
    const passes = fake.state.quitCalls;
    process.kill(process.pid, 'SIGUSR2');
    expect(fake.state.quitCalls).toBe(passes);
  });

  it('a TERM while the host starts quits cleanly and releases the data dir', async () => {
    const { startApp } = await import('../../main/app/shell.js');
    const dataDir = scratch('tend-shell-term-');
    const booting = startApp({ dataDir, argv: ['electron', '.'], assets, intervalMs: 50, env: { XDG_CONFIG_HOME: scratch('tend-shell-config-') }, log: () => undefined });
    process.kill(process.pid, 'SIGTERM');
    running = await booting;
    // Seen before the engine started: it never starts and the app exits; seen after: a quit.
    if (running === null) expect(fake.state.exitCodes).toEqual([0]);
    else await waitFor(() => fake.state.quitCalls >= 2, 10_000, 'the quit the TERM asked for');
    expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(false);
  });

  it('quits cleanly from the tray: the engine stops and the data dir is released', async () => {
    const { dataDir } = await boot();
    expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(true);
    clickTray('Quit Tend');
    await waitFor(() => fake.state.quitCalls >= 2, 10_000, 'the second quit after shutdown');
    expect(existsSync(join(dataDir, 'daemon.pid'))).toBe(false);
    expect(fake.trays[0]!.destroyed).toBe(true);
    // Closing the window now really closes it.
    expect(win().userClose()).toBe(true);
  });
});

describe('Electron stays at the adapter', () => {
  it("only main/app/electron.ts imports 'electron' in main/ (the preload has its own one-line adapter)", () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(c|m)?ts$/.test(e.name) && /from\s+['"]electron['"]|require\(\s*['"]electron['"]\s*\)/.test(readFileSync(p, 'utf8'))) offenders.push(relative(REPO, p));
      }
    };
    walk(join(REPO, 'main'));
    expect(offenders).toEqual(['main/app/electron.ts']);
  });
});
