// Control operations from the CLI: the store plus a local backend to stop jobs through their
// durable handles, and a signal to nudge the owning daemon.
import type { ControlDeps } from '../engine/ops/control.js';
import { dataDirPath, withStore } from './io.js';

export async function withControl<T>(fn: (c: ControlDeps) => Promise<T>): Promise<T> {
  const dir = await dataDirPath();
  const [{ createLocalBackend }, { nudgeDaemon }, { tendVersion }] = await Promise.all([
    import('../../worker/local/local-backend.js'),
    import('../engine/daemon/nudge.js'),
    import('../engine/version.js'),
  ]);
  const killGraceMs = Number(process.env.TEND_KILL_GRACE_MS ?? 10_000);
  return withStore((store) =>
    fn({
      store,
      backends: new Map([['local', createLocalBackend({ dataDir: dir, tendVersion: tendVersion(), killGraceMs })]]),
      now: () => Date.now(),
      killGraceMs,
      nudge: () => void nudgeDaemon(dir),
    }),
  );
}
