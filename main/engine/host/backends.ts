// The backends a Tend host runs work on: this machine's processes (local), its Slurm cluster, and
// one worker-pool backend per other computer, created when work for it is first met. The engine
// declares the port (backend.ts) and imports none of these; the host hands them in.
import { readManifest } from '../../../worker/jobdir/jobdir.js';
import { followLog, tailLog } from '../../../worker/jobdir/logs.js';
import { createLocalBackend, type LocalBackendOptions } from '../../../worker/local/local-backend.js';
import type { WaiterTools } from '../../../worker/local/tools.js';
import { createSlurmBackend, type SlurmBackendOptions } from '../../../worker/slurm/slurm-backend.js';
import type { Backend, BackendLookup } from '../backend.js';
import { systemClock } from '../clock.js';
import type { BackendHooks, Backends } from '../engine.js';
import { createPoolBackend } from '../pool/pool-backend.js';
import type { Settings } from '../settings.js';
import type { Store } from '../store/store.js';
import { tendVersion } from '../version.js';

export interface StandardBackendOptions {
  /** Backends used instead of (or beside) the standard ones, by name (tests: a test double as `local`). */
  replace?: Map<string, Backend>;
  /** Settings of the local backend (tests: start timeouts). */
  local?: Partial<Omit<LocalBackendOptions, 'dataDir' | 'tendVersion' | 'onExit'>>;
  /** Settings of the Slurm backend (tests: a counting runner, timeouts). */
  slurm?: Partial<Omit<SlurmBackendOptions, 'dataDir' | 'tendVersion'>>;
}

/** The settings of how waiters start (TEND_JOB_SHELL, TEND_SPAWNER), for a local backend. */
export function waiterTools(s: Settings): WaiterTools {
  return { shell: s.jobShell, spawner: s.spawner };
}

/**
 * Batch waiters a local backend may keep: a few more than the slots, as a job's slot is free once
 * its sentinel is read, a moment before its waiter has stopped the job's leftovers and is back.
 */
export function batchWaiterCount(s: Settings): number {
  return Math.ceil(s.maxParallel * 1.5);
}

/** A backend factory for `new Engine({ backends })`. */
export function standardBackends(o: StandardBackendOptions = {}): (hooks: BackendHooks) => Backends {
  return (h) => {
    const named = new Map(o.replace ?? []);
    if (!named.has('local')) {
      named.set('local', createLocalBackend({ dataDir: h.dataDir, tendVersion: tendVersion(), killGraceMs: h.killGraceMs, onExit: h.exited, tools: waiterTools(h.settings), batchWaiters: batchWaiterCount(h.settings), ...o.local }));
    }
    // Routines and jobs that choose `backend: slurm` (and ledger entries of a previous daemon).
    // Creating it runs no command: health() says whether Slurm is there when work asks for it.
    if (!named.has('slurm')) {
      named.set('slurm', createSlurmBackend({ dataDir: h.dataDir, tendVersion: tendVersion(), killGraceMs: h.killGraceMs, binDir: h.settings.slurmBinDir, sharedFs: h.settings.slurmSharedFs, ...o.slurm }));
    }
    const POOL = 'pool:';
    return {
      named,
      create: (name) => (name.startsWith(POOL) ? createPoolBackend(name.slice(POOL.length), h.store, h.clock, h.wakeWorker, h.settings, { tailLog, followLog, readManifest }) : undefined),
    };
  };
}

/**
 * The standard backends of a process that does not run the engine (the CLI's one-click
 * operations, `tend mcp`): through them it stops what any backend started and reads runs' files.
 * Creating them starts nothing; they launch nothing here.
 */
export function standaloneBackends(dataDir: string, store: Store, settings: Settings): BackendLookup {
  const { named, create } = standardBackends()({ dataDir, store, clock: systemClock, killGraceMs: settings.killGraceMs, settings, exited: () => undefined, wakeWorker: () => undefined });
  return {
    get(name) {
      let b = named.get(name);
      if (!b && create) {
        b = create(name);
        if (b) named.set(name, b);
      }
      return b;
    },
  };
}
