// Options a routine or a batch job gives the Slurm backend (`backend: slurm`, `slurm: {…}`). One
// schema for every boundary; the backend turns the validated values into an sbatch argument
// array (never a shell string), so values reach sbatch verbatim. Extra flags are whitelisted by
// name and by value syntax: a flag Tend sets itself (--output, --chdir, --wrap, --export …) or one
// that would break how Tend follows the job (--array, --clusters …) is refused with a reason.
import { z } from 'zod';
import { DurationError, parseDuration } from '../timing/duration.js';

export interface SlurmOptions {
  /** `--partition`: one name or a comma list. */
  partition?: string;
  /** `--time`, normalised to `[D-]HH:MM:SS` (or `UNLIMITED`). */
  time?: string;
  /** `--cpus-per-task`. */
  cpus?: number;
  /** `--mem` (per node), normalised to whole MiB: `<n>M`. */
  memory?: string;
  /** Further sbatch flags, each one argument `--name` or `--name=value` (see SBATCH_FLAGS). */
  extra?: string[];
}

/** Allowed extra flags: whether each takes a value (`=value` required), none, or either. */
export const SBATCH_FLAGS: Record<string, 'value' | 'none' | 'optional'> = {
  account: 'value',
  qos: 'value',
  constraint: 'value',
  gres: 'value',
  gpus: 'value',
  'gpus-per-node': 'value',
  'gpus-per-task': 'value',
  'gpus-per-socket': 'value',
  'cpus-per-gpu': 'value',
  'mem-per-cpu': 'value',
  'mem-per-gpu': 'value',
  nodes: 'value',
  ntasks: 'value',
  'ntasks-per-node': 'value',
  'ntasks-per-core': 'value',
  'ntasks-per-socket': 'value',
  'sockets-per-node': 'value',
  'cores-per-socket': 'value',
  'threads-per-core': 'value',
  mincpus: 'value',
  nodelist: 'value',
  exclude: 'value',
  reservation: 'value',
  comment: 'value',
  begin: 'value',
  deadline: 'value',
  'time-min': 'value',
  dependency: 'value',
  'kill-on-invalid-dep': 'value',
  'mail-type': 'value',
  'mail-user': 'value',
  licenses: 'value',
  tmp: 'value',
  hint: 'value',
  distribution: 'value',
  signal: 'value',
  wckey: 'value',
  priority: 'value',
  switches: 'value',
  'core-spec': 'value',
  'thread-spec': 'value',
  'gpu-bind': 'value',
  'cpu-freq': 'value',
  profile: 'value',
  network: 'value',
  'acctg-freq': 'value',
  propagate: 'optional',
  nice: 'optional',
  exclusive: 'optional',
  'no-kill': 'optional',
  requeue: 'none',
  'no-requeue': 'none',
  hold: 'none',
  overcommit: 'none',
  oversubscribe: 'none',
  contiguous: 'none',
  'spread-job': 'none',
  'use-min-nodes': 'none',
  reboot: 'none',
};

/** Flags with a dedicated option, or set by Tend itself, or that break following the job. */
const REFUSED: Record<string, string> = {
  partition: 'use slurm.partition',
  time: 'use slurm.time',
  'cpus-per-task': 'use slurm.cpus',
  mem: 'use slurm.memory',
  output: 'Tend sets it (the job directory holds the streams)',
  error: 'Tend sets it (the job directory holds the streams)',
  input: 'Tend sets it',
  chdir: 'Tend sets it (the job directory; use cwd for the working directory)',
  'job-name': 'Tend sets it (it names the run, for adoption after a crash)',
  parsable: 'Tend sets it',
  wrap: 'Tend submits its own job wrapper',
  export: 'Tend sets it (use env for the environment)',
  'export-file': 'Tend sets it (use env for the environment)',
  'open-mode': 'Tend sets it',
  array: 'one Tend job is one Slurm job; post several jobs instead',
  clusters: 'Tend follows jobs on the cluster its Slurm commands talk to',
  'cluster-constraint': 'Tend follows jobs on the cluster its Slurm commands talk to',
  wait: 'Tend follows the job itself',
  'test-only': 'Tend needs a job that runs',
  uid: 'not allowed',
  gid: 'not allowed',
  'get-user-env': 'not allowed',
  batch: 'not allowed',
};

/** Values: no whitespace, quotes, shell or glob metacharacters; what Slurm's own syntaxes need. */
const SAFE_VALUE = /^[A-Za-z0-9_.,:@%+/=[\]-]{1,512}$/;
const FLAG = /^--([a-z][a-z0-9-]*)(?:=([\s\S]*))?$/;

/** Null when `arg` is an allowed extra flag, else why not. */
export function extraFlagProblem(arg: string): string | null {
  const m = FLAG.exec(arg);
  if (!m) {
    return arg.startsWith('-') && !arg.startsWith('--')
      ? `short flags are not accepted: use the long form, e.g. --account=NAME instead of -A NAME`
      : `each extra flag is one argument --name or --name=value, got ${JSON.stringify(arg.slice(0, 60))}`;
  }
  const name = m[1]!;
  const value = m[2];
  const refused = REFUSED[name];
  if (refused) return `--${name} is not accepted: ${refused}`;
  const kind = SBATCH_FLAGS[name];
  if (!kind) return `--${name} is not an allowed sbatch flag (allowed: ${Object.keys(SBATCH_FLAGS).map((n) => `--${n}`).join(', ')})`;
  if (kind === 'none' && value !== undefined) return `--${name} takes no value`;
  if (kind === 'value' && value === undefined) return `--${name} needs a value: --${name}=VALUE`;
  if (value !== undefined && !SAFE_VALUE.test(value)) {
    return `--${name}: the value may hold letters, digits and _ . , : @ % + / = [ ] - only (no spaces, quotes or shell characters), got ${JSON.stringify(value.slice(0, 60))}`;
  }
  return null;
}

const TIME_FORMS: [RegExp, (n: number[]) => number][] = [
  [/^(\d+)$/, ([m]) => m! * 60],
  [/^(\d+):(\d{1,2})$/, ([m, s]) => m! * 60 + s!],
  [/^(\d+):(\d{1,2}):(\d{1,2})$/, ([h, m, s]) => h! * 3600 + m! * 60 + s!],
  [/^(\d+)-(\d+)$/, ([d, h]) => d! * 86400 + h! * 3600],
  [/^(\d+)-(\d+):(\d{1,2})$/, ([d, h, m]) => d! * 86400 + h! * 3600 + m! * 60],
  [/^(\d+)-(\d+):(\d{1,2}):(\d{1,2})$/, ([d, h, m, s]) => d! * 86400 + h! * 3600 + m! * 60 + s!],
];
const MAX_TIME_S = 365 * 86400;

/** Seconds of a Slurm time string (`MM`, `MM:SS`, `HH:MM:SS`, `D-HH[:MM[:SS]]`), or null. */
export function slurmTimeSeconds(text: string): number | null {
  for (const [re, f] of TIME_FORMS) {
    const m = re.exec(text);
    if (m) return f(m.slice(1).map(Number));
  }
  return null;
}

/** `[D-]HH:MM:SS`. Slurm counts time limits in whole minutes and rounds seconds up. */
export function formatSlurmTime(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const d = Math.floor(s / 86400);
  const pad = (n: number) => String(n).padStart(2, '0');
  const hms = `${pad(Math.floor((s % 86400) / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
  return d > 0 ? `${d}-${hms}` : hms;
}

const timeField = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const text = String(value).trim();
  if (/^(unlimited|infinite)$/i.test(text)) return 'UNLIMITED';
  let seconds = typeof value === 'string' ? slurmTimeSeconds(text) : null;
  if (seconds === null) {
    try {
      seconds = parseDuration(value) / 1000;
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        message: `time limit: a Slurm time (MM, HH:MM:SS, D-HH:MM:SS), a duration (90s, 2h) or UNLIMITED${err instanceof DurationError ? ` (duration ${err.message})` : ''}`,
      });
      return z.NEVER;
    }
  }
  if (seconds <= 0 || seconds > MAX_TIME_S) {
    ctx.addIssue({ code: 'custom', message: 'time limit must be more than 0 and at most 365 days' });
    return z.NEVER;
  }
  return formatSlurmTime(seconds);
});

const MEM = /^(\d+(?:\.\d+)?)\s*(k|m|g|t|kb|mb|gb|tb|kib|mib|gib|tib)?$/i;
const MIB_PER: Record<string, number> = { k: 1 / 1024, m: 1, g: 1024, t: 1024 * 1024 };

const memoryField = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const m = MEM.exec(String(value).trim());
  // Slurm's default unit is MiB: a bare number is MiB.
  const mib = m ? Math.ceil(Number(m[1]) * (MIB_PER[(m[2] ?? 'm')[0]!.toLowerCase()] ?? NaN)) : NaN;
  if (!Number.isSafeInteger(mib) || mib < 1 || mib > 1024 ** 3) {
    ctx.addIssue({ code: 'custom', message: 'memory per node: a number of MiB or e.g. 512M, 4G, 1.5G' });
    return z.NEVER;
  }
  return `${mib}M`;
});

export const SlurmOptionsSchema = z
  .strictObject({
    partition: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$/, 'a partition name or a comma list of them (letters, digits, _ . -)')
      .max(512)
      .optional()
      .describe('Slurm partition (sbatch --partition). Default: the cluster’s default partition.'),
    time: timeField.optional().describe('Time limit (sbatch --time): 30 (minutes), 1:30:00, 2-00:00:00, 90m, 2h or UNLIMITED. Default: the partition’s.'),
    cpus: z.number().int().min(1).max(100_000).optional().describe('CPUs per task (sbatch --cpus-per-task).'),
    memory: memoryField.optional().describe('Memory per node (sbatch --mem): MiB, or e.g. 512M, 4G.'),
    extra: z
      .array(
        z.string().superRefine((arg, ctx) => {
          const problem = extraFlagProblem(arg);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }),
      )
      .max(64)
      .optional()
      .describe('Further sbatch flags, one per element, long form: ["--account=proj", "--qos=short", "--exclusive"].'),
  })
  .describe('Options of the Slurm backend (with backend: slurm).');

/** The sbatch arguments the options stand for, in a fixed order (validated again: defence in depth). */
export function sbatchArgs(o: SlurmOptions | null | undefined): string[] {
  if (!o) return [];
  const parsed = SlurmOptionsSchema.parse(o);
  const args: string[] = [];
  if (parsed.partition) args.push(`--partition=${parsed.partition}`);
  if (parsed.time) args.push(`--time=${parsed.time}`);
  if (parsed.cpus !== undefined) args.push(`--cpus-per-task=${parsed.cpus}`);
  if (parsed.memory) args.push(`--mem=${parsed.memory}`);
  for (const e of parsed.extra ?? []) args.push(e);
  return args;
}
