import type { Command } from 'commander';
import { action, asFlags, collect, dataDirPath, print, table, usage, withStore } from '../io.js';
import type { JobRow } from '../../engine/domain/types.js';
import { collectSecrets, maskArgs, maskText } from '../../engine/mask.js';
import { applyBackendFlags, BACKEND_FLAG_OF, backendFlags, type BackendFlags } from '../slurm-flags.js';

/** A job as printed: secrets masked (also in a name derived from the command line). */
function jobView(j: JobRow) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: j.id,
    name: maskText(j.name, collectSecrets(j.args, j.env)),
    command: j.command,
    args: maskArgs(j.args),
    status: j.status,
    exitCode: j.exitCode,
    signal: j.signal,
    reason: j.reason,
    computer: j.computer,
    backend: j.backend,
    slurm: j.slurm,
    runDir: j.runDir,
    dependencies: j.dependencies,
    createdAt: iso(j.createdAt),
    startedAt: iso(j.startedAt),
    endedAt: iso(j.endedAt),
  };
}

const JOB_FLAGS: Record<string, string> = { after: '--after', computer: '--computer', name: '--name', cwd: '--cwd', args: 'command', ...BACKEND_FLAG_OF };

export function register(program: Command): void {
  const job = program.command('job').description('one-off batch jobs');

  backendFlags(job.command('post [command...]'))
    .description('run a command once on a worker with a free slot: tend job post --after 3 -- CMD ARGS')
    .option('--after <id>', 'job that must complete first; repeatable', collect)
    .option('--computer <user@HOST>', 'run only on this computer')
    .option('--name <name>', 'display name')
    .option('--cwd <dir>', 'working directory (default: the current one)')
    .option('--json', 'machine-readable output')
    .action(
      action(async (command: string[], o: BackendFlags & { after?: string[]; computer?: string; name?: string; cwd?: string; json?: boolean }) => {
        if (!command.length) usage('command', 'give the command after --, e.g. tend job post -- ./convert.sh in.csv');
        const after = (o.after ?? []).flatMap((a) => a.split(',')).map((a) => {
          const n = /^\d{1,16}$/.test(a.trim()) ? Number(a.trim()) : NaN;
          if (!Number.isSafeInteger(n) || n <= 0) usage('--after', `job ids are positive integers, got "${a}"`);
          return n;
        });
        const { postJob } = await import('../../engine/ops/jobs.js');
        const input: Record<string, unknown> = { command: command[0], args: command.slice(1), after };
        if (o.computer) input.computer = o.computer;
        // The default name is the command line: never with its secrets in clear.
        input.name = o.name ?? [command[0], ...maskArgs(command.slice(1))].join(' ').slice(0, 80);
        // Like a shell: relative to where tend runs, and without --cwd a job runs right here
        // (unless it is meant for another computer, whose directories are its own).
        const { resolve } = await import('node:path');
        const { localComputer } = await import('../../engine/domain/computer.js');
        if (o.cwd) input.cwd = resolve(o.cwd);
        else if (!o.computer || o.computer === localComputer()) input.cwd = process.cwd();
        applyBackendFlags(o, input);
        const j = await withStore((s) => asFlags(JOB_FLAGS, () => postJob(s, input, Date.now())));
        const { nudgeDaemon } = await import('../../engine/daemon/nudge.js');
        nudgeDaemon(await dataDirPath());
        print(o.json, { id: j.id, status: j.status }, () => String(j.id));
      }),
    );

  job
    .command('list')
    .option('--status <status>', 'only jobs with this status')
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { status?: string; json?: boolean }) => {
        const rows = await withStore((s) => s.jobs.list(10_000));
        const out = rows.filter((j) => !o.status || j.status === o.status.toUpperCase()).map(jobView);
        print(o.json, out, () => table([['ID', 'STATUS', 'EXIT', 'AFTER', 'NAME'], ...out.map((j) => [String(j.id), j.status, j.exitCode === null ? '-' : String(j.exitCode), j.dependencies.join(',') || '-', j.name])]));
      }),
    );

  job
    .command('show <id>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (id: string, o: { json?: boolean }) => {
        const { getJob, parseJobId } = await import('../../engine/ops/jobs.js');
        const j = jobView(await withStore((s) => getJob(s, parseJobId(id))));
        print(o.json, j, () => Object.entries(j).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : (v ?? '-')}`).join('\n'));
      }),
    );

  job
    .command('cancel <id>')
    .option('--json', 'machine-readable output')
    .action(
      action(async (id: string, o: { json?: boolean }) => {
        const { parseJobId } = await import('../../engine/ops/jobs.js');
        const { withControl } = await import('../control.js');
        const n = parseJobId(id);
        await withControl(async (c) => {
          const { cancelJob } = await import('../../engine/ops/control.js');
          await cancelJob(c, n);
        });
        print(o.json, { id: n, status: 'CANCEL' }, () => `job ${n} cancelled`);
      }),
    );

  job
    .command('logs <id>')
    .option('--stream <stream>', 'stdout or stderr', 'stdout')
    .option('--tail <n>', 'last N lines')
    .option('--follow', 'keep printing new output until the job ends')
    .action(
      action(async (id: string, o: { stream: string; tail?: string; follow?: boolean }) => {
        const { parseJobId, getJob } = await import('../../engine/ops/jobs.js');
        const { secretsOf } = await import('../../engine/mask.js');
        const { j, secrets } = await withStore((s) => {
          const found = getJob(s, parseJobId(id));
          return { j: found, secrets: secretsOf(s.jobs.get(found.id)) };
        });
        const { printLogs } = await import('./logs.js');
        await printLogs({ backend: j.backend, runDir: j.runDir, label: `job ${j.id}`, stream: o.stream, tail: o.tail, follow: o.follow, secrets });
      }),
    );
}
