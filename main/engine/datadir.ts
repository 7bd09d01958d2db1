// One data dir for the app, the daemon and the CLI: TEND_DATA_DIR, else the platform's user data dir.
import os from 'node:os';
import { join, resolve } from 'node:path';

export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.TEND_DATA_DIR) return resolve(env.TEND_DATA_DIR);
  const home = os.homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'tend');
  if (process.platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'tend');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'tend');
}

export const paths = (dir: string) => ({
  db: join(dir, 'tend.db'),
  pid: join(dir, 'daemon.pid'),
  pidLock: join(dir, 'daemon.pid.lock'),
  state: join(dir, 'daemon.state.json'),
  log: join(dir, 'daemon.log'),
  api: join(dir, 'api.json'),
  runs: join(dir, 'runs'),
});
