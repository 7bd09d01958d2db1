// Chromium's profile folder (Electron's userData) is never the engine's data dir, nor inside or
// around it — the trap being macOS and Windows, where <appData>/Tend and <appData>/tend are one.
import { describe, expect, it } from 'vitest';
import { profileDir } from '../../main/app/profile.js';

describe('profileDir', () => {
  it('is <appData>/tend-desktop beside the default data dirs on each OS', () => {
    expect(profileDir('/Users/me/Library/Application Support', '/Users/me/Library/Application Support/tend', 'darwin')).toBe('/Users/me/Library/Application Support/tend-desktop');
    expect(profileDir('/home/me/.config', '/home/me/.local/share/tend', 'linux')).toBe('/home/me/.config/tend-desktop');
  });

  it('moves beside the data dir when TEND_DATA_DIR is the profile folder, inside it or around it (ignoring case on macOS)', () => {
    expect(profileDir('/Users/me/AS', '/Users/me/AS/Tend-Desktop', 'darwin')).toBe('/Users/me/AS/Tend-Desktop-tend-desktop-profile');
    expect(profileDir('/home/me/.config', '/home/me/.config', 'linux')).toBe('/home/me/.config-tend-desktop-profile');
    expect(profileDir('/home/me/.config', '/home/me/.config/tend-desktop/data', 'linux')).toBe('/home/me/.config/tend-desktop/data-tend-desktop-profile');
    // Linux file systems mind case: a data dir that differs by case is another folder.
    expect(profileDir('/home/me/.config', '/home/me/.config/Tend-Desktop', 'linux')).toBe('/home/me/.config/tend-desktop');
  });
});
