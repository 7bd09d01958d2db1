// The waiter tools the local backend's suites run with: by default run.sh and standbys in sh and
// batch waiters in perl (where installed); the dash and bash --posix variants
// (local-backend-dash.test.ts, local-backend-bash-posix.test.ts) set `shell` before they import
// the suites, as TEND_JOB_SHELL does for a daemon, which makes batch waiters sh too.
import { basename } from 'node:path';
import type { WaiterTools } from '../../worker/local/index.js';
import { findTool, jobShell } from '../../worker/local/tools.js';

export const suiteTools: WaiterTools = {};

/** What a batch waiter of these suites runs in: perl where installed, unless a shell is given. */
export function batchWaiterKind(): 'perl' | 'sh' {
  return !suiteTools.shell?.trim() && findTool('perl') ? 'perl' : 'sh';
}

/** The program name (comm) a batch waiter of these suites runs as. */
export function batchWaiterComm(): string {
  return batchWaiterKind() === 'perl' ? 'perl' : basename(jobShell(suiteTools.shell)[0]!);
}
