// The waiter (run.sh) is POSIX sh: the local backend's tests again with it run by bash in POSIX mode (what macOS's /bin/sh is).
import { suiteTools } from '../../helpers/waiter-tools.js';

suiteTools.shell = '/bin/bash --posix';
await import('./local-backend.test.js');
await import('./local-backend-cancel.test.js');
await import('./local-backend-logs.test.js');
await import('./local-backend-survival.test.js');
await import('./standby.test.js');
await import('./batch-waiters.test.js');
