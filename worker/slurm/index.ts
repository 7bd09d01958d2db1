// The Slurm backend and the pieces tests and the benchmark use directly.
export { createSlurmBackend, type SlurmBackend, type SlurmBackendOptions } from './slurm-backend.js';
export { execRunner, queryEnv, type CommandResult, type SlurmCommand, type SlurmRunner } from './commands.js';
export { parseSlurmHandle, type SlurmHandle } from './handle.js';
export { readSlurmRecord, SLURM_FILES, type SlurmRecord } from './jobdir.js';
export { jobNameFor } from './submit.js';
