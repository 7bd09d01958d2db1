// Control operations from the CLI: the store plus the host's backends (local, Slurm) to stop jobs
// through their durable handles, and a signal to nudge the owning daemon.
import type { ControlDeps } from '../engine/ops/control.js';
import { cliSettings, dataDirPath, withStore } from './io.js';

export async function withControl<T>(fn: (c: ControlDeps) => Promise<T>): Promise<T> {
  const dir = await dataDirPath();
  const [{ nudgeDaemon }, { standaloneBackends }] = await Promise.all([import('../engine/daemon/nudge.js'), import('../engine/host/backends.js')]);
  const settings = await cliSettings();
  const { killGraceMs, commandTtlMs } = settings;
  return withStore((store) => {
    const all = standaloneBackends(dir, store, settings);
    return fn({
      store,
      // A worker host's run is left to the daemon, which answers the worker's long poll at once
      // (scheduler/check.ts stops a run stopped by hand that still runs).
      backends: { get: (name) => (name.startsWith('pool:') ? undefined : all.get(name)) },
      now: () => Date.now(),
      killGraceMs,
      commandTtlMs,
      nudge: () => void nudgeDaemon(dir),
    });
  });
}
