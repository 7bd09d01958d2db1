// Chromium's profile (Electron's userData: caches, local storage, the single-instance lock, the
// app's own settings) gets its own folder, never the engine's data dir. Left alone, Electron puts
// it at <appData>/Tend — on macOS and Windows, whose file systems ignore case, the very folder
// Tend's data dir is (<appData>/tend). Set before `ready` (and before the single-instance lock).
import { join, relative, resolve, isAbsolute } from 'node:path';

export const PROFILE_NAME = 'tend-desktop';

/** Whether one of the two paths is the other or inside it (case-insensitively where the OS is). */
function overlaps(a: string, b: string, platform: NodeJS.Platform): boolean {
  const fold = (p: string) => (platform === 'darwin' || platform === 'win32' ? resolve(p).toLowerCase() : resolve(p));
  const inside = (x: string, y: string) => {
    const r = relative(fold(y), fold(x));
    return r === '' || (!r.startsWith('..') && !isAbsolute(r));
  };
  return inside(a, b) || inside(b, a);
}

export function profileDir(appData: string, dataDir: string, platform: NodeJS.Platform = process.platform): string {
  const usual = join(appData, PROFILE_NAME);
  if (!overlaps(usual, dataDir, platform)) return usual;
  // TEND_DATA_DIR was put where the profile would go (or around it): go beside the data dir.
  return `${resolve(dataDir)}-${PROFILE_NAME}-profile`;
}
