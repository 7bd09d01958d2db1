// The one window: created on demand, hidden (not closed) when a person closes it, locked down:
// context isolation, sandbox, no Node, a strict CSP, no navigation away from the app's page, no
// new windows, no webviews, no permission but writing to the clipboard (permissions.ts).
import { app, BrowserWindow, session, type IpcMainInvokeEvent } from './electron.js';
import type { AppAssets } from './assets.js';
import { isTrustedUrl, senderAllowed, type TrustedPage } from './ipc.js';
import { pushChannel, type PushEvent } from './ipc-channels.js';
import { TODAY_TARGET } from './notify-policy.js';
import { permissionAllowed } from './permissions.js';
import { secureWebPreferences, withCsp } from './security.js';

/** Process-wide guards, installed once after `ready`, for every web contents there will be. */
export function lockDown(page: TrustedPage): void {
  const s = session.defaultSession;
  s.setPermissionRequestHandler((_wc, permission, callback, details) => callback(permissionAllowed(permission, details.requestingUrl, details.isMainFrame, page)));
  s.setPermissionCheckHandler((wc, permission, _origin, details) => permissionAllowed(permission, details.requestingUrl ?? wc?.getURL(), details.isMainFrame, page));
  // The page also carries the policy in a <meta> tag; the header covers what the tag cannot.
  s.webRequest.onHeadersReceived((details, callback) => callback({ responseHeaders: withCsp(details.responseHeaders) }));
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-attach-webview', (e) => e.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    const stay = (e: { preventDefault(): void }, url: string) => {
      if (!isTrustedUrl(url, page)) e.preventDefault();
    };
    contents.on('will-navigate', stay);
    contents.on('will-redirect', stay);
    contents.on('will-frame-navigate', (e) => {
      if (!isTrustedUrl(e.url, page)) e.preventDefault();
    });
  });
}

export class MainWindow {
  private win: BrowserWindow | null = null;
  /** Set while quitting: closing the window then really closes it. */
  quitting = false;

  constructor(
    private readonly assets: AppAssets,
    private readonly page: TrustedPage,
  ) {}

  get current(): BrowserWindow | null {
    return this.win && !this.win.isDestroyed() ? this.win : null;
  }

  /** Show (creating it if needed), optionally at a renderer route like `#/routine/<id>`. */
  show(target?: string): void {
    const existing = this.current;
    if (!existing) {
      this.create(target ?? TODAY_TARGET);
      return;
    }
    if (target) this.navigate(existing, target);
    if (existing.isMinimized()) existing.restore();
    existing.show();
    existing.focus();
    app.dock?.show();
  }

  /** Push an event to the page (if there is one). */
  push(event: PushEvent, payload: unknown): void {
    const w = this.current;
    if (w && !w.webContents.isDestroyed()) w.webContents.send(pushChannel(event), payload);
  }

  /** The IPC sender check: the app's own window, its top frame, on the app's page. */
  allows(event: IpcMainInvokeEvent): boolean {
    const frame = event.senderFrame;
    return senderAllowed({ url: frame?.url, topFrame: !!frame && frame.parent === null, ownWindow: !!this.current && event.sender === this.current.webContents }, this.page);
  }

  reload(): void {
    this.current?.webContents.reload();
  }

  destroy(): void {
    this.current?.destroy();
    this.win = null;
  }

  private create(target: string): void {
    const w = new BrowserWindow({
      width: 1280,
      height: 820,
      minWidth: 720,
      minHeight: 480,
      show: false,
      title: 'Tend',
      icon: this.assets.appIcon,
      autoHideMenuBar: true,
      webPreferences: secureWebPreferences(this.assets.preload),
    });
    this.win = w;
    w.on('close', (e) => {
      // Closing the window keeps Tend in the tray.
      if (this.quitting) return;
      e.preventDefault();
      w.hide();
      if (process.platform === 'darwin') app.dock?.hide();
    });
    w.on('closed', () => {
      if (this.win === w) this.win = null;
    });
    w.once('ready-to-show', () => {
      w.show();
      w.focus();
    });
    const hash = target.replace(/^#/, '');
    void w.loadFile(this.page.indexFile, { hash }).catch(() => undefined);
  }

  private navigate(w: BrowserWindow, target: string): void {
    // The hash router follows location.hash; nothing reloads. The value is ours, serialised.
    if (!/^#\/[\w/%.@:~!*'()-]*$/.test(target)) return;
    void w.webContents.executeJavaScript(`location.hash = ${JSON.stringify(target)}`).catch(() => undefined);
  }
}
