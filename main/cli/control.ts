// Control operations from the CLI: the store plus a local backend to stop jobs through their
// durable handles, and a signal to nudge the owning daemon.
import type { ControlDeps } from '../engine/ops/control.js';
import { cliSettings, dataDirPath, withStore } from './io.js';

export async function withControl<T>(fn: (c: ControlDeps) => Promise<T>): Promise<T> {
  const dir = await dataDirPath();
  const [{ createLocalBackend }, { nudgeDaemon }, { tendVersion }] = await Promise.all([
    import('../../worker/local/local-backend.js'),
    import('../engine/daemon/nudge.js'),
    import('../engine/version.js'),
  ]);
  const { killGraceMs, commandTtlMs } = await cliSettings();
  return withStore((store) =>
    fn({
      store,
      backends: new Map([['local', createLocalBackend({ dataDir: dir, tendVersion: tendVersion(), killGraceMs })]]),
      now: () => Date.now(),
      killGraceMs,
      commandTtlMs,
      nudge: () => void nudgeDaemon(dir),
    }),
  );
}
