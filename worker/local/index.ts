// The local backend and the helpers other parts of Tend use with it (log reading for
// `tend logs`, heartbeats, the revision check the remote worker shares).
export { createLocalBackend, DEFAULT_KILL_GRACE_MS, type LocalBackend, type LocalBackendOptions } from './local-backend.js';
export { handleFromRunDir, parseHandle, type LocalHandle } from './handle.js';
export { FILES, readHeartbeat, readManifest, readPidRecord, readSentinel, type Manifest, type PidRecord, type Sentinel } from '../jobdir/jobdir.js';
export { DEFAULT_LOG_CAP_BYTES, followLog, halfCap, logBytesOnDisk, logPaths, tailLog, type FollowOptions, type Stream } from '../jobdir/logs.js';
export { checkRevision } from '../jobdir/revision.js';
export { missingOutputs } from '../jobdir/outputs.js';
export { VANISHED_REASON } from './settle.js';
export { tendEnv } from './submit.js';
export type { WaiterTools } from './tools.js';
