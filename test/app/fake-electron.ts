// A stand-in for the parts of Electron the app uses, recording what the app asks of it. Loaded
// with `vi.mock('electron', …)`: the app imports Electron at one module (main/app/electron.ts),
// so this replaces all of it. Objects are stable (the app holds them); `reset()` clears state.
import { EventEmitter } from 'node:events';

type Listener = (...args: any[]) => unknown;

class Emitter {
  private readonly e = new EventEmitter();
  on(ev: string, fn: Listener) {
    this.e.on(ev, fn);
    return this;
  }
  once(ev: string, fn: Listener) {
    this.e.once(ev, fn);
    return this;
  }
  off(ev: string, fn: Listener) {
    this.e.off(ev, fn);
    return this;
  }
  emit(ev: string, ...args: unknown[]): boolean {
    return this.e.emit(ev, ...args);
  }
  listenerCount(ev: string): number {
    return this.e.listenerCount(ev);
  }
  removeAll(): void {
    this.e.removeAllListeners();
  }
}

/** An event whose default can be prevented, as Electron passes them. */
export function cancellable(extra: Record<string, unknown> = {}) {
  return { defaultPrevented: false, preventDefault() { this.defaultPrevented = true; }, ...extra };
}

export const state = {
  lock: true,
  quitCalls: 0,
  exitCodes: [] as number[],
  userData: '/nonexistent',
  appData: '/nonexistent',
  /** Calls in order, for what must happen before what (e.g. userData before the lock). */
  calls: [] as string[],
  packaged: false,
  login: { openAtLogin: false, wasOpenedAtLogin: false },
  loginSets: [] as unknown[],
  errors: [] as { title: string; message: string }[],
  handlers: new Map<string, Listener>(),
  permissionHandler: null as Listener | null,
  permissionCheck: null as Listener | null,
  headersHandler: null as Listener | null,
};

class FakeApp extends Emitter {
  dock = undefined;
  get isPackaged() {
    return state.packaged;
  }
  requestSingleInstanceLock() {
    state.calls.push('requestSingleInstanceLock');
    return state.lock;
  }
  whenReady() {
    state.calls.push('whenReady');
    return Promise.resolve();
  }
  quit() {
    state.quitCalls++;
    const e = cancellable();
    this.emit('before-quit', e);
    if (!e.defaultPrevented) this.emit('will-quit', cancellable());
  }
  exit(code = 0) {
    state.exitCodes.push(code);
  }
  getPath(name: string) {
    if (name === 'appData') return state.appData;
    if (name !== 'userData') throw new Error(`fake app.getPath(${name})`);
    return state.userData;
  }
  setPath(name: string, path: string) {
    if (name !== 'userData') throw new Error(`fake app.setPath(${name})`);
    state.calls.push(`setPath userData ${path}`);
    state.userData = path;
  }
  getAppPath() {
    return '/fake/app';
  }
  setAppUserModelId() {}
  getLoginItemSettings() {
    return { ...state.login };
  }
  setLoginItemSettings(s: { openAtLogin: boolean }) {
    state.loginSets.push(s);
    state.login.openAtLogin = s.openAtLogin;
  }
}

export class FakeWebContents extends Emitter {
  sent: { channel: string; payload: unknown }[] = [];
  scripts: string[] = [];
  reloads = 0;
  openHandler: Listener | null = null;
  destroyed = false;
  send(channel: string, payload: unknown) {
    this.sent.push({ channel, payload });
  }
  executeJavaScript(code: string) {
    this.scripts.push(code);
    return Promise.resolve(undefined);
  }
  setWindowOpenHandler(fn: Listener) {
    this.openHandler = fn;
  }
  reload() {
    this.reloads++;
  }
  isDestroyed() {
    return this.destroyed;
  }
}

export const windows: FakeBrowserWindow[] = [];

export class FakeBrowserWindow extends Emitter {
  readonly webContents = new FakeWebContents();
  visible = false;
  focused = 0;
  destroyed = false;
  loaded: { file?: string; url?: string; options?: unknown } | null = null;
  constructor(readonly options: Record<string, any>) {
    super();
    windows.push(this);
    app.emit('web-contents-created', cancellable(), this.webContents);
  }
  loadFile(file: string, options?: unknown) {
    this.loaded = { file, options };
    return Promise.resolve();
  }
  loadURL(url: string) {
    this.loaded = { url };
    return Promise.resolve();
  }
  show() {
    this.visible = true;
  }
  hide() {
    this.visible = false;
  }
  focus() {
    this.focused++;
  }
  isMinimized() {
    return false;
  }
  restore() {}
  isDestroyed() {
    return this.destroyed;
  }
  destroy() {
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
  }
  /** What a person closing the window does. */
  userClose(): boolean {
    const e = cancellable();
    this.emit('close', e);
    if (!e.defaultPrevented) this.destroy();
    return !e.defaultPrevented;
  }
}

export const trays: FakeTray[] = [];

export class FakeTray extends Emitter {
  image: unknown;
  tooltip = '';
  menu: { template: any[] } | null = null;
  destroyed = false;
  constructor(image: unknown) {
    super();
    this.image = image;
    trays.push(this);
  }
  setImage(i: unknown) {
    this.image = i;
  }
  setToolTip(t: string) {
    this.tooltip = t;
  }
  setContextMenu(m: { template: any[] }) {
    this.menu = m;
  }
  destroy() {
    this.destroyed = true;
  }
}

export const notifications: FakeNotification[] = [];

export class FakeNotification extends Emitter {
  static isSupported() {
    return true;
  }
  shown = false;
  constructor(readonly options: { title: string; body: string }) {
    super();
    notifications.push(this);
  }
  show() {
    this.shown = true;
  }
}

export const app = new FakeApp();
export const powerMonitor = new Emitter();

export const electron = {
  app,
  BrowserWindow: FakeBrowserWindow,
  Tray: FakeTray,
  Notification: FakeNotification,
  powerMonitor,
  ipcMain: {
    handle(channel: string, fn: Listener) {
      if (state.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
      state.handlers.set(channel, fn);
    },
  },
  Menu: { buildFromTemplate: (template: any[]) => ({ template }) },
  nativeImage: { createFromPath: (path: string) => ({ path }) },
  dialog: { showErrorBox: (title: string, message: string) => void state.errors.push({ title, message }) },
  session: {
    defaultSession: {
      setPermissionRequestHandler: (fn: Listener) => void (state.permissionHandler = fn),
      setPermissionCheckHandler: (fn: Listener) => void (state.permissionCheck = fn),
      webRequest: { onHeadersReceived: (fn: Listener) => void (state.headersHandler = fn) },
    },
  },
};

export function reset(userData: string): void {
  app.removeAll();
  powerMonitor.removeAll();
  Object.assign(state, {
    lock: true,
    quitCalls: 0,
    exitCodes: [],
    userData,
    appData: userData,
    calls: [],
    packaged: false,
    login: { openAtLogin: false, wasOpenedAtLogin: false },
    loginSets: [],
    errors: [],
    handlers: new Map(),
    permissionHandler: null,
    permissionCheck: null,
    headersHandler: null,
  });
  windows.length = 0;
  trays.length = 0;
  notifications.length = 0;
}

/** Invoke an IPC handler as a frame would: `sender` and `senderFrame` decide the sender check. */
export function invoke(channel: string, args: unknown, from: { sender: unknown; url: string | null; top?: boolean }): Promise<unknown> {
  const fn = state.handlers.get(channel);
  if (!fn) throw new Error(`no handler for ${channel}`);
  const senderFrame = from.url === null ? null : { url: from.url, parent: from.top === false ? {} : null };
  return Promise.resolve(fn({ sender: from.sender, senderFrame }, args));
}
