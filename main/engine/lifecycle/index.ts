// The lifecycle state machines, as data. See machine.ts for the shared contract.

import type { RoutineKind, RunStatus } from '../domain/types.js';
import { BATCH_RUN_TERMINAL } from './batch-run.js';
import { REALTIME_RUN_TERMINAL } from './realtime-run.js';

export * from './machine.js';
export * from './batch-run.js';
export * from './realtime-run.js';
export * from './trigger.js';
export * from './batch-job.js';

const RUN_TERMINAL = new Set<string>([...BATCH_RUN_TERMINAL, ...REALTIME_RUN_TERMINAL]);

/** Terminal for either kind of run (COMPLETED, ERROR, CANCELLED, EXITED, STOPPED). */
export function isTerminalRunStatus(status: RunStatus, kind?: RoutineKind): boolean {
  if (kind === 'batch') return (BATCH_RUN_TERMINAL as readonly string[]).includes(status);
  if (kind === 'realtime') return (REALTIME_RUN_TERMINAL as readonly string[]).includes(status);
  return RUN_TERMINAL.has(status);
}
