// The backend flags `tend routine add|edit` and `tend job post` share: --backend slurm and the
// sbatch options it takes. The engine validates them (SlurmOptionsSchema); a refusal names the flag.
import type { Command } from 'commander';
import { collect, usage } from './io.js';

export interface BackendFlags {
  backend?: string;
  partition?: string;
  timeLimit?: string;
  cpus?: string;
  mem?: string;
  sbatch?: string[];
}

export function backendFlags(cmd: Command): Command {
  return cmd
    .option('--backend <name>', 'local (default) or slurm: submit with sbatch to your cluster')
    .option('--partition <name>', 'slurm: partition (sbatch --partition)')
    .option('--time-limit <time>', 'slurm: time limit, e.g. 90m, 2h, 1:30:00 (sbatch --time)')
    .option('--cpus <n>', 'slurm: CPUs per task (sbatch --cpus-per-task)')
    .option('--mem <size>', 'slurm: memory per node, e.g. 4G (sbatch --mem)')
    .option('--sbatch <flag>', 'slurm: a further sbatch flag, long form (--account=proj); repeatable', collect);
}

/**
 * Sets `backend` and `slurm` on the input. Creating, Slurm options need `--backend slurm`; editing,
 * they replace the routine's Slurm options and the engine checks its backend.
 */
export function applyBackendFlags(o: BackendFlags, input: Record<string, unknown>, editing = false): void {
  const slurm: Record<string, unknown> = {};
  if (o.partition !== undefined) slurm.partition = o.partition;
  if (o.timeLimit !== undefined) slurm.time = o.timeLimit;
  if (o.cpus !== undefined) {
    const n = Number(o.cpus);
    if (!Number.isSafeInteger(n)) usage('--cpus', `a whole number of CPUs, got "${o.cpus}"`);
    slurm.cpus = n;
  }
  if (o.mem !== undefined) slurm.memory = o.mem;
  if (o.sbatch !== undefined) slurm.extra = o.sbatch;
  if (o.backend !== undefined) input.backend = o.backend;
  if (Object.keys(slurm).length > 0) {
    if (o.backend !== 'slurm' && !(editing && o.backend === undefined)) usage('--backend', 'Slurm options (--partition, --time-limit, --cpus, --mem, --sbatch) need --backend slurm');
    input.slurm = slurm;
  }
}

/** Input paths to the flags that set them (see asFlags). */
export const BACKEND_FLAG_OF: Record<string, string> = {
  backend: '--backend',
  slurm: '--backend',
  'slurm.partition': '--partition',
  'slurm.time': '--time-limit',
  'slurm.cpus': '--cpus',
  'slurm.memory': '--mem',
  'slurm.extra': '--sbatch',
};
