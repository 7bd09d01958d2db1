// Control operations from the CLI: the store plus a local backend to stop jobs through their
// durable handles, and a signal to nudge the owning daemon.
import type { ControlDeps } from '../engine/ops/control.js';
import { cliSettings, dataDirPath, withStore } from './io.js';

export async function withControl<T>(fn: (c: ControlDeps) => Promise<T>): Promise<T> {
  const dir = await dataDirPath();
  const [{ createLocalBackend }, { nudgeDaemon }, { tendVersion }, { waiterTools }] = await Promise.all([
    import('../../worker/local/local-backend.js'),
    import('../engine/daemon/nudge.js'),
    import('../engine/version.js'),
    import('../engine/host/backends.js'),
  ]);
  const settings = await cliSettings();
  const { killGraceMs, commandTtlMs } = settings;
  return withStore((store) =>
    fn({
      store,
      backends: new Map([['local', createLocalBackend({ dataDir: dir, tendVersion: tendVersion(), killGraceMs, tools: waiterTools(settings) })]]),
      now: () => Date.now(),
      killGraceMs,
      commandTtlMs,
      nudge: () => void nudgeDaemon(dir),
    }),
  );
}
