// Starting a Node program through process.execPath. Under plain Node that is node. Under
// Electron (the desktop app, or the CLI run by the app's runtime) it is the app itself: started
// as is it would be a second app (a window, the single-instance lock, an error box), so every
// such child gets ELECTRON_RUN_AS_NODE=1 and, on macOS, the helper binary (no Dock icon).
import { electronVersion } from './store/sqlite-binding.js';

/** The executable that runs a Node program as this process's runtime. */
export function nodeExecPath(): string {
  const helper = (process as NodeJS.Process & { helperExecPath?: string }).helperExecPath;
  return electronVersion() && process.platform === 'darwin' && helper ? helper : process.execPath;
}

/** `env` for a child started through nodeExecPath(): under Electron, as Node. */
export function nodeChildEnv<T extends Record<string, string | undefined>>(env: T): T & { ELECTRON_RUN_AS_NODE?: string } {
  return electronVersion() ? { ...env, ELECTRON_RUN_AS_NODE: '1' } : env;
}
