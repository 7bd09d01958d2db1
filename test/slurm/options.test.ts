// Slurm options at every boundary (routine definitions, batch jobs): normalised, refused with a
// reason when they would let a value become a flag Tend owns, a shell fragment or a second job;
// and what reaches sbatch is an argument array, never a command line. No cluster needed.
import { describe, expect, it } from 'vitest';
import { sbatchArgs, SlurmOptionsSchema } from '../../main/engine/domain/slurm.js';
import { localComputer, parseRoutine, toInput } from '../../main/engine/domain/schema.js';
import { TendError } from '../../main/engine/errors.js';
import { postJob } from '../../main/engine/ops/jobs.js';
import { Store } from '../../main/engine/store/store.js';
import type { CommandResult, SlurmCommand, SlurmRunner } from '../../worker/slurm/commands.js';
import { submitSlurmJob } from '../../worker/slurm/submit.js';
import { jobSpec, scratch } from './helpers.js';

const parse = (o: unknown) => SlurmOptionsSchema.safeParse(o);
const issues = (o: unknown) => {
  const r = parse(o);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('slurm options', () => {
  it('normalise time limits from Slurm forms and Tend durations', () => {
    const t = (time: unknown) => (parse({ time }) as { data: { time: string } }).data.time;
    expect(t('90')).toBe('01:30:00');
    expect(t('1:30')).toBe('00:01:30');
    expect(t('0:01:00')).toBe('00:01:00');
    expect(t('2-00:00:00')).toBe('2-00:00:00');
    expect(t('1-12')).toBe('1-12:00:00');
    expect(t('1h30m')).toBe('01:30:00');
    expect(t('90s')).toBe('00:01:30');
    expect(t('unlimited')).toBe('UNLIMITED');
    expect(issues({ time: 'soon' })[0]).toMatch(/^time: time limit: a Slurm time/);
    expect(issues({ time: '400-00:00:00' })[0]).toMatch(/at most 365 days/);
  });

  it('normalise memory to whole MiB (a bare number is MiB, as in Slurm)', () => {
    const m = (memory: unknown) => (parse({ memory }) as { data: { memory: string } }).data.memory;
    expect(m(512)).toBe('512M');
    expect(m('4G')).toBe('4096M');
    expect(m('1.5GiB')).toBe('1536M');
    expect(m('2048k')).toBe('2M');
    expect(issues({ memory: '-1G' })[0]).toMatch(/memory per node/);
    expect(issues({ memory: '4 G; reboot' })[0]).toMatch(/memory per node/);
  });

  it('accept partitions, cpus and whitelisted long flags; give sbatch one argument per value', () => {
    const o = { partition: 'debug,long', time: '30', cpus: 4, memory: '1G', extra: ['--account=proj-1', '--qos=short', '--exclusive', '--dependency=afterok:12:13', '--signal=B:USR1@60'] };
    expect(issues(o)).toEqual([]);
    expect(sbatchArgs(o)).toEqual([
      '--partition=debug,long',
      '--time=00:30:00',
      '--cpus-per-task=4',
      '--mem=1024M',
      '--account=proj-1',
      '--qos=short',
      '--exclusive',
      '--dependency=afterok:12:13',
      '--signal=B:USR1@60',
    ]);
    expect(sbatchArgs(null)).toEqual([]);
  });

  it('refuse flags Tend sets, flags that break following the job, short and unknown flags, and shell text', () => {
    const problem = (flag: string) => issues({ extra: [flag] })[0] ?? 'accepted';
    expect(problem('--output=/tmp/elsewhere')).toMatch(/--output is not accepted: Tend sets it/);
    expect(problem('--wrap=rm -rf ~')).toMatch(/--wrap is not accepted/);
    expect(problem('--export=NONE')).toMatch(/use env for the environment/);
    expect(problem('--array=1-100')).toMatch(/one Tend job is one Slurm job/);
    expect(problem('--clusters=other')).toMatch(/--clusters is not accepted/);
    expect(problem('--partition=x')).toMatch(/use slurm.partition/);
    expect(problem('-A proj')).toMatch(/short flags are not accepted/);
    expect(problem('--account')).toMatch(/needs a value/);
    expect(problem('--hold=yes')).toMatch(/takes no value/);
    expect(problem('--frobnicate=1')).toMatch(/not an allowed sbatch flag/);
    expect(problem('--comment=$(reboot)')).toMatch(/no spaces, quotes or shell characters/);
    expect(problem('--account=a;b')).toMatch(/no spaces, quotes or shell characters/);
    expect(problem('--comment=two words')).toMatch(/no spaces/);
    expect(problem('--comment=line\nbreak')).toMatch(/no spaces/);
    expect(problem('account=proj')).toMatch(/each extra flag is one argument --name or --name=value/);
    expect(issues({ partition: 'debug; rm -rf /' })[0]).toMatch(/^partition: a partition name/);
    expect(issues({ cpus: 0 })[0]).toMatch(/^cpus:/);
    expect(issues({ nodes: 2 })[0]).toMatch(/unknown|Unrecognized/i);
  });

  it('pass hostile values to sbatch as single arguments and the command through the environment only', async () => {
    const box = scratch('tend-slurm-argv-');
    try {
      const calls: { cmd: SlurmCommand; args: string[]; env: NodeJS.ProcessEnv | undefined }[] = [];
      const runner: SlurmRunner = {
        async run(cmd, args, opts): Promise<CommandResult> {
          calls.push({ cmd, args, env: opts?.env });
          return { code: 0, stdout: cmd === 'sbatch' ? '4242\n' : '', stderr: '', failure: null };
        },
      };
      const evil = `'; touch ${box.dir}/pwned; echo '`;
      const spec = jobSpec(box.dir, evil, ['$(reboot)', '--password=hunter2'], { slurm: { extra: ['--comment=ok'] } });
      const h = await submitSlurmJob(spec, { runner, tendVersion: 't', cluster: async () => 'tend' });
      expect(h).toMatchObject({ backend: 'slurm', cluster: 'tend', jobId: '4242', runDir: spec.runDir });
      const sbatch = calls.find((c) => c.cmd === 'sbatch')!;
      expect(sbatch.args.at(-1)).toBe(`${spec.runDir}/slurm.sh`);
      expect(sbatch.args).toContain('--comment=ok');
      expect(sbatch.args).toContain('--no-requeue');
      expect(sbatch.args.join(' ')).not.toContain('reboot');
      expect(sbatch.args.join(' ')).not.toContain('hunter2');
      const env = sbatch.env!;
      expect(env['TEND_SLURM_ARGC']).toBe('3');
      expect(env['TEND_SLURM_ARG_0']).toBe(evil);
      expect(env['TEND_SLURM_ARG_1']).toBe('$(reboot)');
      expect(env['TEND_SLURM_ARG_2']).toBe('--password=hunter2');
      expect(env['TEND_RUN_ID']).toBe(spec.runId);
    } finally {
      box.remove();
    }
  });

  it('refuse SBATCH_/SLURM_ variables in a job environment: they would steer sbatch', async () => {
    const box = scratch('tend-slurm-env-');
    try {
      const runner: SlurmRunner = { run: async () => ({ code: 0, stdout: '1\n', stderr: '', failure: null }) };
      await expect(submitSlurmJob(jobSpec(box.dir, '/bin/true', [], { env: { SBATCH_PARTITION: 'x' } }), { runner, tendVersion: 't', cluster: async () => 'c' })).rejects.toThrow(
        /SBATCH_PARTITION would change how sbatch submits the job/,
      );
    } finally {
      box.remove();
    }
  });
});

describe('routines and batch jobs choosing backend slurm', () => {
  const ctx = { now: Date.UTC(2026, 0, 5), localComputer: 'me@host' };

  it('a routine takes backend slurm with options, and exports them back unchanged', () => {
    const def = parseRoutine({ id: 'me@host:sim/run', command: '/bin/true', every: '1h', backend: 'slurm', slurm: { partition: 'debug', time: '2h', memory: '2G' } }, ctx);
    expect(def.backend).toBe('slurm');
    expect(def.slurm).toEqual({ partition: 'debug', time: '02:00:00', memory: '2048M' });
    const again = parseRoutine(toInput(def), ctx);
    expect(again).toEqual(def);
    expect(parseRoutine({ id: 'me@host:sim/plain', command: '/bin/true', every: '1h', backend: 'slurm' }, ctx).slurm).toEqual({});
    expect(parseRoutine({ id: 'me@host:sim/local', command: '/bin/true', every: '1h' }, ctx).slurm).toBeUndefined();
  });

  it('a routine names the bad option by its path', () => {
    const err = (input: Record<string, unknown>) => {
      try {
        parseRoutine({ id: 'me@host:x', command: '/bin/true', every: '1h', ...input }, ctx);
      } catch (e) {
        return (e as TendError).issues;
      }
      return [];
    };
    expect(err({ slurm: { partition: 'debug' } })).toEqual([{ path: 'slurm', message: 'slurm options need backend: slurm' }]);
    expect(err({ backend: 'slurm', slurm: { extra: ['--output=/x'] } })[0]!.path).toBe('slurm.extra.0');
    expect(err({ backend: 'pbs' })[0]!.path).toBe('backend');
  });

  it('a batch job posted with backend slurm keeps its options and is addressed to this host', () => {
    const store = Store.open(':memory:');
    try {
      const cols = (store.db.prepare(`SELECT name FROM pragma_table_info('jobs')`).pluck().all() as string[]);
      expect(cols).toContain('slurm'); // migration 3
      const j = postJob(store, { command: '/bin/true', backend: 'slurm', slurm: { time: '10', cpus: 2 } }, 1000);
      expect(store.jobs.get(j.id)).toMatchObject({ backend: 'slurm', slurm: { time: '00:10:00', cpus: 2 }, computer: localComputer() });
      const plain = postJob(store, { command: '/bin/true' }, 1000);
      expect(store.jobs.get(plain.id)).toMatchObject({ backend: null, slurm: null, computer: null });
      expect(() => postJob(store, { command: '/bin/true', slurm: { cpus: 2 } }, 1000)).toThrow(/slurm options need backend: slurm/);
      expect(() => postJob(store, { command: '/bin/true', backend: 'slurm', slurm: { extra: ['--wrap=x'] } }, 1000)).toThrow(/--wrap is not accepted/);
    } finally {
      store.close();
    }
  });
});
