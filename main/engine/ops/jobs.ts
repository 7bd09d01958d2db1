// One-off batch jobs: post (validated, dependencies checked for existence and cycles), cancel.
import { z } from 'zod';
import { isAbsolute } from 'node:path';
import { localComputer, zodIssues } from '../domain/schema.js';
import { SlurmOptionsSchema } from '../domain/slurm.js';
import type { JobRow } from '../domain/types.js';
import { invalid, notFound, TendError, type Issue } from '../errors.js';
import type { Store } from '../store/store.js';

const COMPUTER = /^[^@\s:]+@[^@\s:]+$/;

export const JobInputSchema = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  command: z.string().min(1, 'must not be empty').max(4096),
  args: z.array(z.string().max(65536)).max(1000).optional(),
  cwd: z.string().min(1).max(4096).refine(isAbsolute, 'must be an absolute path').optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment variable names are letters, digits and _'), z.string().max(65536)).optional(),
  computer: z.string().regex(COMPUTER, 'must look like user@COMPUTER').optional(),
  after: z.array(z.number().int().positive()).max(10_000).optional(),
  /** slurm: submitted with sbatch by the Tend host it is posted to (never fetched by a remote worker). */
  backend: z.enum(['local', 'slurm']).optional(),
  slurm: SlurmOptionsSchema.optional(),
});

export type JobInput = z.input<typeof JobInputSchema>;

export function postJob(store: Store, input: unknown, now: number): JobRow {
  const parsed = JobInputSchema.safeParse(input);
  if (!parsed.success) throw invalid(zodIssues(parsed.error));
  const j = parsed.data;
  if (j.slurm !== undefined && j.backend !== 'slurm') throw invalid({ path: 'slurm', message: 'slurm options need backend: slurm' });
  const deps = [...new Set(j.after ?? [])];
  return store.tx(() => {
    const issues: Issue[] = [];
    // A new job cannot be in a cycle (nothing depends on it yet); waiting on itself or on an
    // unknown id is what can go wrong.
    deps.forEach((d, i) => {
      if (store.jobs.status(d) === null) issues.push({ path: `after.${i}`, message: `unknown job ${d}` });
    });
    if (issues.length) throw invalid(issues);
    const statuses = deps.map((d) => store.jobs.status(d)!);
    const dead = deps.find((_, i) => statuses[i] === 'ERROR' || statuses[i] === 'CANCEL');
    const status = deps.length === 0 || statuses.every((s) => s === 'COMPLETED') ? 'PENDING' : 'WAITING';
    const id = store.jobs.insert(
      {
        name: j.name ?? [j.command, ...(j.args ?? [])].join(' ').slice(0, 80),
        command: j.command,
        args: j.args ?? [],
        cwd: j.cwd ?? null,
        env: j.env ?? {},
        // A Slurm job is submitted by this host: addressed to it, no remote worker claims it.
        computer: j.computer ?? (j.backend === 'slurm' ? localComputer() : null),
        dependencies: deps,
        backend: j.backend ?? null,
        slurm: j.backend === 'slurm' ? (j.slurm ?? {}) : null,
      },
      status,
      now,
    );
    store.events.append({ type: 'job:posted', jobId: id, message: `job ${id} posted (${status})` }, now);
    if (dead !== undefined) {
      // Known already: it will never run. Say so at once rather than on the next pass.
      store.jobs.cas(id, ['WAITING'], 'CANCEL', { reason: `dependency job ${dead} ended ${store.jobs.status(dead)}`, endedAt: now }, now);
      store.events.append({ type: 'job:cancelled', jobId: id, message: `job ${id} cancelled: dependency job ${dead} already ended` }, now);
    }
    return store.jobs.get(id)!;
  });
}

export function getJob(store: Store, id: number): JobRow {
  const job = store.jobs.get(id);
  if (!job) throw notFound(`job ${id}`);
  return job;
}

export function parseJobId(raw: string): number {
  const id = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id <= 0) throw new TendError('INVALID', `job id must be a positive integer, got "${raw}"`, [{ path: 'id', message: 'must be a positive integer' }]);
  return id;
}
