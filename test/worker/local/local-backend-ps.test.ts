// The local backend's tests again, with process identity read by `ps` (the provider macOS and
// the BSDs use) instead of /proc: the same behaviour must hold with either.
process.env['TEND_PROCESS_TABLE'] = 'ps';
await import('./local-backend.test.js');
await import('./local-backend-cancel.test.js');
await import('./local-backend-logs.test.js');
await import('./local-backend-survival.test.js');
await import('./standby.test.js');
await import('./batch-waiters.test.js');
