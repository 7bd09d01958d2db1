// `tend job …`: one-off batch jobs posted, listed and shown through the built CLI (no daemon:
// jobs stay queued, which is what these tests look at).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dbSnapshot } from './db-snapshot.js';
import { cliSandbox } from './run-cli.js';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface JobView {
  id: number;
  name: string;
  status: string;
  exitCode: number | null;
  signal: string | null;
  reason: string | null;
  computer: string | null;
  runDir: string | null;
  dependencies: number[];
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}

let cli: ReturnType<typeof cliSandbox>;
beforeEach(() => {
  cli = cliSandbox();
});
afterEach(() => cli.remove());

const post = (...args: string[]) => cli.ok<{ id: number; status: string }>('job', 'post', '--json', ...args);
const jobs = () => cli.ok<JobView[]>('job', 'list', '--json');

describe('job post / list / show', () => {
  it('post --json prints the new id', () => {
    const a = post('--', 'echo', 'hello');
    expect(a).toEqual({ id: 1, status: 'PENDING' });
    expect(post('--', 'echo', 'again').id).toBe(2);
    // Without --json: the id alone, for scripts.
    expect(cli.ok<string>('job', 'post', '--', 'true')).toBe('3\n');
  });

  it('list --json: id, name, status, exit code, run dir, times and dependencies', () => {
    const before = Date.now();
    const a = post('--name', 'convert', '--', './convert.sh', 'in.csv');
    const b = post('--after', String(a.id), '--', './load.sh');
    expect(b.status).toBe('WAITING');
    const rows = jobs();
    expect(rows.map((j) => j.id)).toEqual([b.id, a.id]);
    const ja = rows.find((j) => j.id === a.id)!;
    expect(ja).toMatchObject({ name: 'convert', status: 'PENDING', exitCode: null, runDir: null, dependencies: [], startedAt: null, endedAt: null });
    expect(ja.createdAt).toMatch(ISO_UTC);
    expect(Date.parse(ja.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(rows.find((j) => j.id === b.id)).toMatchObject({ name: './load.sh', status: 'WAITING', dependencies: [a.id] });
    for (const j of rows) for (const k of ['id', 'name', 'status', 'exitCode', 'runDir', 'createdAt', 'startedAt', 'endedAt', 'dependencies']) expect(j).toHaveProperty(k);
  });

  it('--after takes several ids, comma separated or repeated', () => {
    const a = post('--', 'a');
    const b = post('--', 'b');
    const c = post('--', 'c');
    const d = post('--after', `${a.id},${b.id}`, '--after', String(c.id), '--', 'd');
    expect(cli.ok<JobView>('job', 'show', String(d.id), '--json').dependencies).toEqual([a.id, b.id, c.id]);
  });

  it('list --status filters', () => {
    const a = post('--', 'a');
    post('--after', String(a.id), '--', 'b');
    expect(cli.ok<JobView[]>('job', 'list', '--status', 'waiting', '--json').map((j) => j.name)).toEqual(['b']);
  });

  it('show --json: one job; an unknown id is exit 1, a malformed one exit 2', () => {
    const a = post('--computer', 'me@box', '--', 'echo', 'x');
    expect(cli.ok<JobView>('job', 'show', String(a.id), '--json')).toMatchObject({ id: a.id, name: 'echo x', computer: 'me@box', status: 'PENDING' });
    const missing = cli.tend('job', 'show', '42');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/job 42 not found/);
    expect(cli.tend('job', 'show', 'abc').code).toBe(2);
  });
});

describe('job post: refused with exit 2, nothing stored', () => {
  const refused = (args: string[], line: RegExp) => {
    cli.ok('job', 'list');
    const before = dbSnapshot(cli.dir);
    const r = cli.tend('job', 'post', ...args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr.trimEnd()).toMatch(line);
    expect(dbSnapshot(cli.dir)).toEqual(before);
  };

  it('an unknown --after job', () => {
    post('--', 'a');
    refused(['--after', '99', '--', 'b'], /^tend: --after: unknown job 99$/);
    expect(jobs()).toHaveLength(1);
  });

  it('a malformed --after', () => {
    refused(['--after', 'abc', '--', 'b'], /^tend: --after: job ids are positive integers, got "abc"$/);
    refused(['--after', '0', '--', 'b'], /^tend: --after: /);
  });

  it('no command', () => {
    refused([], /^tend: command: give the command after --/);
  });

  it('a malformed --computer', () => {
    refused(['--computer', 'nobody', '--', 'x'], /^tend: --computer: must look like user@COMPUTER$/);
  });
});

describe('tend --help', () => {
  it('prints usage and the command list, exit 0', () => {
    const r = cli.tend('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: tend /);
    for (const c of ['routine', 'schedule', 'job', 'logs', 'next', 'daemon']) expect(r.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
  });

  it('every command group has help', () => {
    for (const args of [['routine', '--help'], ['routine', 'add', '--help'], ['schedule', '--help'], ['job', '--help'], ['next', '--help']]) {
      const r = cli.tend(...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: tend /);
    }
  });

  it('an unknown command is exit 2 with a hint', () => {
    const r = cli.tend('frobnicate');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});

describe('job post --backend slurm', () => {
  it('stores the backend and the sbatch options, addressed to this host', () => {
    const { id } = post('--backend', 'slurm', '--partition', 'debug', '--time-limit', '90m', '--cpus', '2', '--mem', '4G', '--sbatch', '--exclusive', '--', './train.sh');
    const job = cli.ok<JobView & { backend: string; slurm: Record<string, unknown> }>('job', 'show', String(id), '--json');
    expect(job.backend).toBe('slurm');
    expect(job.slurm).toEqual({ partition: 'debug', time: '01:30:00', cpus: 2, memory: '4096M', extra: ['--exclusive'] });
    expect(job.computer).toMatch(/^[^@]+@[^@]+$/);
    expect(cli.ok<JobView & { backend: string | null }>('job', 'show', String(post('--', 'true').id), '--json').backend).toBeNull();
  });

  it('refuses bad Slurm options by the flag that set them, storing nothing', () => {
    const refused = (args: string[], line: RegExp) => {
      cli.ok('job', 'list');
      const before = dbSnapshot(cli.dir);
      const r = cli.tend('job', 'post', ...args, '--', 'true');
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trimEnd()).toMatch(line);
      expect(dbSnapshot(cli.dir)).toEqual(before);
    };
    refused(['--partition', 'debug'], /^tend: --backend: Slurm options \(--partition, --time-limit, --cpus, --mem, --sbatch\) need --backend slurm$/);
    refused(['--backend', 'pbs'], /^tend: --backend: /);
    refused(['--backend', 'slurm', '--time-limit', 'forever'], /^tend: --time-limit: time limit: /);
    refused(['--backend', 'slurm', '--cpus', 'two'], /^tend: --cpus: a whole number of CPUs, got "two"$/);
    refused(['--backend', 'slurm', '--cpus', '0'], /^tend: --cpus: /);
    refused(['--backend', 'slurm', '--partition', 'a b'], /^tend: --partition: /);
    refused(['--backend', 'slurm', '--sbatch', '--wrap=rm -rf /'], /^tend: --sbatch: /);
    expect(jobs()).toEqual([]);
  });
});
