// The environment a job inherits from the process that starts it (the daemon, or the desktop
// app), less what belongs to how Tend itself was started: an AppImage's mount (APPIMAGE, APPDIR,
// ARGV0, OWD, and the mount's directories its AppRun put first in PATH, LD_LIBRARY_PATH and
// other search paths — gone once the app quits, and libraries no routine was built against),
// and ELECTRON_RUN_AS_NODE, which would turn any Electron program a routine starts into Node.
import { delimiter } from 'node:path';

const LAUNCHER_VARS = ['APPIMAGE', 'APPDIR', 'ARGV0', 'OWD', 'ELECTRON_RUN_AS_NODE'];

export function inheritedEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const mount = env.APPDIR ? env.APPDIR.replace(/\/+$/, '') : null;
  const inMount = (entry: string) => mount !== null && (entry === mount || entry.startsWith(`${mount}/`));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || LAUNCHER_VARS.includes(k)) continue;
    if (mount && v.includes(mount)) {
      // A search path: keep the entries outside the mount; one left empty is dropped.
      const kept = v.split(delimiter).filter((e) => !inMount(e));
      if (kept.every((e) => e === '')) continue;
      out[k] = kept.join(delimiter);
      continue;
    }
    out[k] = v;
  }
  return out;
}
