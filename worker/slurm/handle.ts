// The durable handle of a Slurm job: the cluster, the scheduler's job id and the run dir. JSON,
// so a daemon that never submitted the job polls, fetches and cancels it from the ledger alone.
import type { Handle } from '../../main/engine/backend.js';
import { readSlurmRecord } from './jobdir.js';

export interface SlurmHandle {
  backend: 'slurm';
  cluster: string;
  /** Null only for a job adopted from a directory whose Slurm id was never learnt. */
  jobId: string | null;
  runDir: string;
  runId: string;
  /** Epoch ms just before sbatch: accounting rows with the same id submitted earlier are other jobs. */
  submittedAt: number | null;
}

export function toHandle(h: SlurmHandle): Handle {
  return { ...h };
}

export function parseSlurmHandle(h: Handle): SlurmHandle | null {
  const runDir = h['runDir'];
  if (typeof runDir !== 'string' || runDir === '') return null;
  const jobId = h['jobId'];
  const cluster = h['cluster'];
  const runId = h['runId'];
  const submittedAt = h['submittedAt'];
  return {
    backend: 'slurm',
    cluster: typeof cluster === 'string' ? cluster : '',
    jobId: typeof jobId === 'string' && /^\d+$/.test(jobId) ? jobId : typeof jobId === 'number' && Number.isSafeInteger(jobId) ? String(jobId) : null,
    runDir,
    runId: typeof runId === 'string' ? runId : '',
    submittedAt: typeof submittedAt === 'number' && Number.isFinite(submittedAt) ? submittedAt : null,
  };
}

/** The handle a directory records (slurm.json), for adoption; null if it was never submitted. */
export function handleFromRunDir(runDir: string, runId: string): SlurmHandle | null {
  const rec = readSlurmRecord(runDir);
  if (!rec) return null;
  return { backend: 'slurm', cluster: rec.cluster, jobId: rec.jobId, runDir, runId, submittedAt: rec.submittedAt || null };
}
