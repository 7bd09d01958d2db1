// The one module of Tend that imports 'electron'. Everything else under main/app imports Electron
// through here, so that tests replace Electron at a single point (`vi.mock('electron', …)`) and
// the logic stays in plain modules that run under Node.
export { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, Notification, powerMonitor, session, Tray } from 'electron';
export type {
  BrowserWindowConstructorOptions,
  IpcMainInvokeEvent,
  MenuItemConstructorOptions,
  NativeImage,
  Session,
  WebContents,
  WebFrameMain,
  WebPreferences,
} from 'electron';
