// What a job inherits: everything but how Tend itself was started (an AppImage's mount and its
// variables, ELECTRON_RUN_AS_NODE).
import { describe, expect, it } from 'vitest';
import { inheritedEnv } from '../../worker/inherited-env.js';

describe('inheritedEnv', () => {
  it("drops the AppImage's variables and its mount's entries in search paths, keeping the rest", () => {
    const mount = '/tmp/.mount_TendXyz';
    const env = inheritedEnv({
      APPIMAGE: '/home/me/Tend.AppImage',
      APPDIR: mount,
      ARGV0: 'Tend.AppImage',
      OWD: '/home/me',
      ELECTRON_RUN_AS_NODE: '1',
      PATH: `${mount}/usr/bin:${mount}/usr/sbin:/usr/local/bin:/usr/bin`,
      LD_LIBRARY_PATH: `${mount}/usr/lib/:${mount}`,
      XDG_DATA_DIRS: `${mount}/usr/share:/usr/share`,
      HOME: '/home/me',
      NOT_A_PATH: '/tmp/.mount_TendXyzOther/thing',
      TOKEN: 'keep-me',
    });
    expect(env).toEqual({ PATH: '/usr/local/bin:/usr/bin', XDG_DATA_DIRS: '/usr/share', HOME: '/home/me', NOT_A_PATH: '/tmp/.mount_TendXyzOther/thing', TOKEN: 'keep-me' });
  });

  it('outside an AppImage the environment passes through, less ELECTRON_RUN_AS_NODE', () => {
    expect(inheritedEnv({ PATH: '/usr/bin', LD_LIBRARY_PATH: '/opt/lib', ELECTRON_RUN_AS_NODE: '1', X: undefined })).toEqual({ PATH: '/usr/bin', LD_LIBRARY_PATH: '/opt/lib' });
  });
});
