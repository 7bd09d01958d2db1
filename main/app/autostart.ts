// Start at login. macOS and Windows: Electron's login item settings. Linux: an XDG autostart
// entry, `$XDG_CONFIG_HOME/autostart/tend-desktop.desktop` (else `~/.config/autostart/`), named,
// like its Icon and StartupWMClass, after the GUI binary and the packaged desktop entry
// (electron-builder.yml's executableName, package.json's desktopName). Either way Tend starts
// with `--hidden`: in the tray, no window.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';

export const HIDDEN_FLAG = '--hidden';
/** The desktop entry's id: the Linux executable, the .desktop file, Electron's app_id / WM_CLASS. */
export const DESKTOP_ID = 'tend-desktop';
/** What the autostart entry was called before the GUI was renamed tend-desktop. */
const LEGACY_NAME = 'tend.desktop';

/** Where the XDG autostart entry lives. */
export function autostartPath(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const config = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(config, 'autostart', `${DESKTOP_ID}.desktop`);
}

export interface LaunchInfo {
  /** process.execPath: the app binary, or the electron binary in development. */
  execPath: string;
  /** $APPIMAGE: the AppImage file itself (execPath points into its temporary mount). */
  appImage?: string | undefined;
  packaged: boolean;
  /** The app directory passed to electron in development (`electron .`). */
  appPath?: string | undefined;
}

/** The command that starts this Tend again, hidden. */
export function launchCommand(l: LaunchInfo): string[] {
  if (l.appImage) return [l.appImage, HIDDEN_FLAG];
  if (l.packaged || !l.appPath) return [l.execPath, HIDDEN_FLAG];
  return [l.execPath, l.appPath, HIDDEN_FLAG];
}

// Desktop Entry Specification, "The Exec key": an argument with a reserved character is quoted;
// inside quotes `"`, `` ` ``, `$` and `\` take a backslash. `%` is doubled (field codes). The
// result is then a string value, whose own escape turns every `\` into `\\`.
const RESERVED = /[\s"'\\><~|&;$*?#()`]/;

export function quoteExecArg(arg: string): string {
  const fieldSafe = arg.replace(/%/g, '%%');
  const quoted = RESERVED.test(fieldSafe) || fieldSafe === '' ? `"${fieldSafe.replace(/(["`$\\])/g, '\\$1')}"` : fieldSafe;
  return quoted.replace(/\\/g, '\\\\');
}

export function execLine(argv: string[]): string {
  return argv.map(quoteExecArg).join(' ');
}

/** The content of the autostart entry. */
export function desktopEntry(command: string[]): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Version=1.0',
    'Name=Tend',
    'GenericName=Scheduler',
    'Comment=Keeps your routines alive and on time',
    `Exec=${execLine(command)}`,
    `Icon=${DESKTOP_ID}`,
    `StartupWMClass=${DESKTOP_ID}`,
    'Terminal=false',
    'Categories=Utility;',
    'StartupNotify=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}

export function installAutostart(file: string, command: string[]): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, desktopEntry(command), { mode: 0o644 });
  renameSync(tmp, file);
}

export function removeAutostart(file: string): void {
  rmSync(file, { force: true });
}

/** Enabled: the entry exists and nobody switched it off (`Hidden=true`, or GNOME's own key). */
export function autostartEnabled(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const text = readFileSync(file, 'utf8');
    return !/^Hidden\s*=\s*true\s*$/m.test(text) && !/^X-GNOME-Autostart-enabled\s*=\s*false\s*$/m.test(text);
  } catch {
    return false;
  }
}

/** The part of Electron's `app` the login item needs (macOS, Windows). */
export interface LoginItemApi {
  getLoginItemSettings(o?: { args?: string[] }): { openAtLogin: boolean; wasOpenedAtLogin?: boolean };
  setLoginItemSettings(s: { openAtLogin: boolean; args?: string[] }): void;
}

export interface LoginItem {
  enabled(): boolean;
  set(on: boolean): void;
}

export function loginItem(platform: NodeJS.Platform, api: LoginItemApi, launch: LaunchInfo, env: NodeJS.ProcessEnv = process.env): LoginItem {
  if (platform === 'win32') {
    // Windows keeps the arguments in the Run key, and matches on them when asked.
    const args = [HIDDEN_FLAG];
    return {
      enabled: () => api.getLoginItemSettings({ args }).openAtLogin,
      set: (on) => api.setLoginItemSettings({ openAtLogin: on, args }),
    };
  }
  if (platform === 'darwin') {
    // macOS passes no arguments to login items: a login launch is seen as `wasOpenedAtLogin`.
    return {
      enabled: () => api.getLoginItemSettings().openAtLogin,
      set: (on) => api.setLoginItemSettings({ openAtLogin: on }),
    };
  }
  const file = autostartPath(env);
  const legacy = join(dirname(file), LEGACY_NAME);
  return {
    enabled: () => autostartEnabled(file) || autostartEnabled(legacy),
    set: (on) => {
      // One entry only: an old-named one would start Tend a second time at login.
      removeAutostart(legacy);
      if (on) installAutostart(file, launchCommand(launch));
      else removeAutostart(file);
    },
  };
}

/** Start without a window: launched with --hidden, or by macOS at login. */
export function startHidden(argv: readonly string[], platform: NodeJS.Platform, api: Pick<LoginItemApi, 'getLoginItemSettings'>): boolean {
  if (argv.includes(HIDDEN_FLAG)) return true;
  if (platform !== 'darwin') return false;
  try {
    return api.getLoginItemSettings().wasOpenedAtLogin === true;
  } catch {
    return false;
  }
}
