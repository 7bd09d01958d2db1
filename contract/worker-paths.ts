// The worker protocol's routes (contract/worker-protocol.ts), by name: what the daemon registers
// at start, apart from the schemas its handlers load with their first request.
export const WORKER_PATHS = {
  commands: '/api/worker/commands',
  claim: '/api/worker/jobs/claim',
  reports: '/api/worker/reports',
  external: '/api/external/:id/:action',
} as const;
