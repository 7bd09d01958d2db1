// The desktop app: one instance, the engine (or an attached daemon) behind IPC, a tray, a window
// on demand, notifications, login item, sleep and wake. Wiring only: every decision is made in a
// plain module (host, ipc, tray-model, notify-policy, pause, autostart) tested under Node.
import { join } from 'node:path';
import { app, dialog, ipcMain, powerMonitor } from './electron.js';
import { dataDir as defaultDataDir } from '../engine/datadir.js';
import { errorMessage } from '../engine/errors.js';
import { installOwnerSignals } from '../engine/daemon/signals.js';
import { appAssets, rendererBuilt, rendererPage, type AppAssets } from './assets.js';
import { HIDDEN_FLAG, loginItem, startHidden, type LoginItem } from './autostart.js';
import { startHost, type Host } from './host.js';
import { ipcTable, REFUSED_SENDER } from './ipc.js';
import { Notifier } from './notifier.js';
import type { NotifyPolicyOptions } from './notify-policy.js';
import { profileDir } from './profile.js';
import { readSettings, writeSettings } from './settings.js';
import { TrayController } from './tray.js';
import { lockDown, MainWindow } from './window.js';

export interface AppOptions {
  dataDir?: string;
  argv?: readonly string[];
  assets?: AppAssets;
  intervalMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Grouping window and rate limit of notifications (defaults: 5 s, 15 min per routine). */
  notify?: NotifyPolicyOptions;
  log?: (line: string) => void;
}

export interface RunningApp {
  host(): Host;
  window: MainWindow;
  tray: TrayController;
  notifier: Notifier;
  login: LoginItem;
  /** Stop everything (the engine releases the data dir); what `before-quit` runs. */
  shutdown(): Promise<void>;
}

const consoleLog = (line: string) => console.log(`tend: ${line}`);

/** Returns null when another instance runs (it is told to show its window) or startup failed. */
export async function startApp(o: AppOptions = {}): Promise<RunningApp | null> {
  const env = o.env ?? process.env;
  const log = o.log ?? consoleLog;
  const dir = o.dataDir ?? defaultDataDir(env);
  // Before anything reads it (the single-instance lock lives there) and before `ready`.
  app.setPath('userData', profileDir(app.getPath('appData'), dir));
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return null;
  }
  // Before the host claims the data dir: `tend` commands nudge the owner in daemon.pid with SIGUSR2
  // (whose default action kills), and a TERM, INT or HUP is a clean quit that releases the claim.
  const signals = installOwnerSignals();
  const argv = o.argv ?? process.argv;
  const hidden = startHidden(argv, process.platform, app);
  const assets = o.assets ?? appAssets();
  const page = rendererPage(assets);
  if (env.TEND_RENDERER_URL) log('TEND_RENDERER_URL is not supported (the CSP allows only the built page): loading the built renderer; for UI work use browser mode');
  const window = new MainWindow(assets, page);
  // Until `ready` the window cannot exist; a second launch meanwhile is remembered.
  let ready = false;
  let showWhenReady = !hidden;
  app.on('second-instance', (_e, otherArgv: string[]) => {
    // Another launch at login (--hidden) has nothing to show; any other launch wants the window.
    if (otherArgv.includes(HIDDEN_FLAG)) return;
    if (ready) window.show();
    else showWhenReady = true;
  });
  app.on('activate', () => ready && window.show());
  // Closing the last window keeps Tend in the tray.
  app.on('window-all-closed', () => undefined);
  if (process.platform === 'win32') app.setAppUserModelId('dev.tend.app');

  await app.whenReady();
  lockDown(page);
  if (hidden && process.platform === 'darwin') app.dock?.hide();

  const hostOptions = () => ({ dataDir: dir, rendererDir: rendererBuilt(assets) ? assets.rendererDir : null, log, ...(o.intervalMs ? { intervalMs: o.intervalMs } : {}) });
  let host: Host;
  try {
    host = await startHost(hostOptions());
  } catch (err) {
    signals.dispose();
    // Also on the terminal: `npm start` users see the why (e.g. no SQLite build for Electron) there.
    log(`cannot start: ${errorMessage(err)}`);
    dialog.showErrorBox('Tend cannot start', errorMessage(err));
    app.exit(1);
    return null;
  }
  signals.onNudge(() => host.nudge());
  if (signals.signal.aborted) {
    log(`${String(signals.signal.reason)} during startup: quitting`);
    await host.close();
    signals.dispose();
    app.exit(0);
    return null;
  }
  if (page.kind === 'file' && !rendererBuilt(assets)) log(`the UI is not built (${assets.rendererIndex} is missing): build the renderer, then reopen the window`);
  log(host.info.mode === 'engine' ? `running the engine for ${dir}` : `attached to daemon pid ${host.info.enginePid} at ${host.info.url}`);

  const settingsFile = join(app.getPath('userData'), 'tend-app.json');
  const login = loginItem(process.platform, app, { execPath: process.execPath, appImage: env.APPIMAGE, packaged: app.isPackaged, appPath: app.getAppPath() }, env);
  const notifier = new Notifier((target) => window.show(target), assets.appIcon, o.notify);
  const tray = new TrayController({
    assets,
    client: () => host.client,
    mode: () => host.info.mode,
    startAtLogin: () => safely(() => login.enabled(), false),
    setStartAtLogin: (on) => login.set(on),
    pausedSchedules: () => readSettings(settingsFile).pausedSchedules,
    rememberPaused: (names) => writeSettings(settingsFile, { ...readSettings(settingsFile), pausedSchedules: names }),
    open: (target) => window.show(target),
    quit: () => app.quit(),
    report: (title, message) => dialog.showErrorBox(title, message),
  });

  // IPC: one handler per channel; the sender must be our window's top frame on our page.
  const table = ipcTable({ client: () => host.client, info: () => host.info });
  for (const [channel, handler] of Object.entries(table)) {
    ipcMain.handle(channel, (event, args: unknown) => (window.allows(event) ? handler(args) : REFUSED_SENDER));
  }

  // Engine events: to the page, the tray and the notifier.
  let unsubscribe = () => {};
  const listen = () => {
    unsubscribe();
    unsubscribe = host.client.subscribe({
      event: (e) => {
        window.push('event', e);
        notifier.offer(e);
        if (e.routineId || e.type.startsWith('schedule:')) tray.poke();
      },
      pass: (p) => window.push('pass', p),
    });
  };
  listen();
  // Also now and then: a new day, or a daemon that stopped answering, changes the picture.
  const periodic = setInterval(() => tray.poke(), 30_000);
  periodic.unref?.();

  // An attached app takes over when its daemon goes away: the scheduler must not stop.
  let stopping: Promise<void> | null = null;
  const takeOver = () => {
    host.onOwnerGone(() => {
      void (async () => {
        if (stopping) return;
        log(`daemon pid ${host.info.enginePid} is gone; taking over ${dir}`);
        await host.close();
        try {
          host = await startHost(hostOptions());
        } catch (err) {
          dialog.showErrorBox('Tend lost its daemon', errorMessage(err));
          return;
        }
        if (stopping) return void host.close();
        listen();
        takeOver();
        window.reload();
        void tray.refresh();
      })();
    });
  };
  takeOver();

  // Sleep and wake: the engine re-reads the clock; on resume a pass runs at once.
  powerMonitor.on('suspend', () => host.power('suspend'));
  powerMonitor.on('resume', () => {
    host.power('resume');
    tray.poke();
  });
  void signals.stop.then(() => app.quit());

  const shutdown = () => {
    stopping ??= (async () => {
      window.quitting = true;
      clearInterval(periodic);
      signals.dispose();
      unsubscribe();
      notifier.stop();
      tray.destroy();
      await host.close();
    })();
    return stopping;
  };
  let stopped = false;
  app.on('before-quit', (e) => {
    window.quitting = true;
    if (stopped) return;
    e.preventDefault();
    void shutdown()
      .catch((err) => log(`shutdown: ${errorMessage(err)}`))
      .finally(() => {
        stopped = true;
        app.quit();
      });
  });

  ready = true;
  await tray.refresh();
  if (showWhenReady) window.show();
  return { host: () => host, window, tray, notifier, login, shutdown };
}

function safely<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}
