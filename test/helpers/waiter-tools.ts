// The waiter tools the local backend's suites run with: sh by default; the dash and bash --posix
// variants (local-backend-dash.test.ts, local-backend-bash-posix.test.ts) set `shell` before they
// import the suites, as TEND_JOB_SHELL does for a daemon.
import type { WaiterTools } from '../../worker/local/index.js';

export const suiteTools: WaiterTools = {};
