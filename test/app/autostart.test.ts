import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  autostartEnabled,
  autostartPath,
  desktopEntry,
  execLine,
  launchCommand,
  loginItem,
  quoteExecArg,
  startHidden,
  type LoginItemApi,
} from '../../main/app/autostart.js';

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), 'tend-autostart-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the XDG autostart entry', () => {
  it('lives in $XDG_CONFIG_HOME/autostart, else ~/.config/autostart', () => {
    expect(autostartPath({ XDG_CONFIG_HOME: '/cfg' }, '/home/me')).toBe('/cfg/autostart/tend-desktop.desktop');
    expect(autostartPath({}, '/home/me')).toBe('/home/me/.config/autostart/tend-desktop.desktop');
    // The spec ignores a relative XDG_CONFIG_HOME.
    expect(autostartPath({ XDG_CONFIG_HOME: 'rel' }, '/home/me')).toBe('/home/me/.config/autostart/tend-desktop.desktop');
  });

  it('starts Tend hidden', () => {
    expect(desktopEntry(['/opt/Tend/tend', '--hidden'])).toBe(
      [
        '[Desktop Entry]',
        'Type=Application',
        'Version=1.0',
        'Name=Tend',
        'GenericName=Scheduler',
        'Comment=Keeps your routines alive and on time',
        'Exec=/opt/Tend/tend --hidden',
        'Icon=tend-desktop',
        'StartupWMClass=tend-desktop',
        'Terminal=false',
        'Categories=Utility;',
        'StartupNotify=false',
        'X-GNOME-Autostart-enabled=true',
        '',
      ].join('\n'),
    );
  });

  it('quotes Exec arguments as the Desktop Entry spec says', () => {
    expect(quoteExecArg('/usr/bin/tend')).toBe('/usr/bin/tend');
    expect(quoteExecArg('/home/me/My Apps/Tend.AppImage')).toBe('"/home/me/My Apps/Tend.AppImage"');
    // Inside quotes " ` $ \ take a backslash; then the string escape doubles every backslash.
    expect(quoteExecArg('a"b')).toBe('"a\\\\"b"');
    expect(quoteExecArg('cost$1')).toBe('"cost\\\\$1"');
    expect(quoteExecArg('C:\\x')).toBe('"C:\\\\\\\\x"');
    // % starts a field code.
    expect(quoteExecArg('100%')).toBe('100%%');
    expect(quoteExecArg('')).toBe('""');
    expect(execLine(['/home/me/My Apps/Tend.AppImage', '--hidden'])).toBe('"/home/me/My Apps/Tend.AppImage" --hidden');
  });

  it('launches the AppImage file (not its temporary mount), the packaged binary, or electron with the app dir', () => {
    expect(launchCommand({ execPath: '/tmp/.mount_Tend/tend', appImage: '/home/me/Tend.AppImage', packaged: true })).toEqual(['/home/me/Tend.AppImage', '--hidden']);
    expect(launchCommand({ execPath: '/opt/Tend/tend', packaged: true, appPath: '/opt/Tend/resources/app.asar' })).toEqual(['/opt/Tend/tend', '--hidden']);
    expect(launchCommand({ execPath: '/src/node_modules/electron/dist/electron', packaged: false, appPath: '/src' })).toEqual(['/src/node_modules/electron/dist/electron', '/src', '--hidden']);
  });

  it('is installed and removed by the Linux login item, which reports its state from the file', () => {
    const config = scratch();
    const api: LoginItemApi = { getLoginItemSettings: () => { throw new Error('not on Linux'); }, setLoginItemSettings: () => { throw new Error('not on Linux'); } };
    const item = loginItem('linux', api, { execPath: '/opt/Tend/tend', packaged: true }, { XDG_CONFIG_HOME: config });
    const file = join(config, 'autostart', 'tend-desktop.desktop');
    expect(item.enabled()).toBe(false);
    item.set(true);
    expect(item.enabled()).toBe(true);
    expect(readFileSync(file, 'utf8')).toContain('Exec=/opt/Tend/tend --hidden\n');
    expect(statSync(file).mode & 0o777).toBe(0o644);
    item.set(false);
    expect(existsSync(file)).toBe(false);
    expect(item.enabled()).toBe(false);
    item.set(false); // removing twice is fine
  });

  it('takes over an entry of the old name (tend.desktop): counted as on, replaced when set, never two', () => {
    const config = scratch();
    const api: LoginItemApi = { getLoginItemSettings: () => ({ openAtLogin: false }), setLoginItemSettings: () => undefined };
    const item = loginItem('linux', api, { execPath: '/opt/Tend/tend-desktop', packaged: true }, { XDG_CONFIG_HOME: config });
    const legacy = join(config, 'autostart', 'tend.desktop');
    mkdirSync(dirname(legacy), { recursive: true });
    writeFileSync(legacy, desktopEntry(['/opt/Tend/tend', '--hidden']));
    expect(item.enabled()).toBe(true);
    item.set(true);
    expect(existsSync(legacy)).toBe(false);
    expect(readFileSync(join(config, 'autostart', 'tend-desktop.desktop'), 'utf8')).toContain('Exec=/opt/Tend/tend-desktop --hidden\n');
    writeFileSync(legacy, desktopEntry(['/opt/Tend/tend', '--hidden']));
    item.set(false);
    expect(existsSync(legacy)).toBe(false);
    expect(item.enabled()).toBe(false);
  });

  it('counts an entry switched off by the desktop (Hidden=true) as disabled', () => {
    const file = join(scratch(), 'tend.desktop');
    writeFileSync(file, `${desktopEntry(['/x', '--hidden'])}Hidden=true\n`);
    expect(autostartEnabled(file)).toBe(false);
    writeFileSync(file, desktopEntry(['/x', '--hidden']).replace('X-GNOME-Autostart-enabled=true', 'X-GNOME-Autostart-enabled=false'));
    expect(autostartEnabled(file)).toBe(false);
  });
});

describe('login items on macOS and Windows', () => {
  function fakeApi(wasOpenedAtLogin = false) {
    const calls: unknown[] = [];
    let on = false;
    const api: LoginItemApi = {
      getLoginItemSettings: (o) => {
        calls.push(['get', o]);
        return { openAtLogin: on, wasOpenedAtLogin };
      },
      setLoginItemSettings: (s) => {
        calls.push(['set', s]);
        on = s.openAtLogin;
      },
    };
    return { api, calls };
  }

  it('Windows registers the Run key with --hidden and asks with the same arguments', () => {
    const { api, calls } = fakeApi();
    const item = loginItem('win32', api, { execPath: 'C:\\Tend\\Tend.exe', packaged: true });
    item.set(true);
    expect(item.enabled()).toBe(true);
    expect(calls).toEqual([
      ['set', { openAtLogin: true, args: ['--hidden'] }],
      ['get', { args: ['--hidden'] }],
    ]);
  });

  it('macOS sets openAtLogin (login items take no arguments)', () => {
    const { api, calls } = fakeApi();
    const item = loginItem('darwin', api, { execPath: '/Applications/Tend.app/Contents/MacOS/Tend', packaged: true });
    item.set(true);
    item.set(false);
    expect(item.enabled()).toBe(false);
    expect(calls).toEqual([['set', { openAtLogin: true }], ['set', { openAtLogin: false }], ['get', undefined]]);
  });

  it('starts hidden with --hidden anywhere, and on macOS when opened at login', () => {
    expect(startHidden(['tend', '--hidden'], 'linux', fakeApi().api)).toBe(true);
    expect(startHidden(['tend'], 'linux', fakeApi(true).api)).toBe(false);
    expect(startHidden(['Tend'], 'darwin', fakeApi(true).api)).toBe(true);
    expect(startHidden(['Tend'], 'darwin', fakeApi(false).api)).toBe(false);
    expect(startHidden(['Tend.exe', '--hidden'], 'win32', fakeApi().api)).toBe(true);
  });
});
