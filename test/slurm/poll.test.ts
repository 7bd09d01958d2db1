// Reading Slurm's answers and turning them into Tend's states and outcomes, with a scripted
// runner (no cluster): batching (one squeue, one sacct, or one scontrol when accounting is off),
// stale rows after a controller reset, every end state Slurm has, health and the runs-dir check.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandResult, SlurmCommand, SlurmRunner } from '../../worker/slurm/commands.js';
import type { SlurmHandle } from '../../worker/slurm/handle.js';
import { canRunJobs, runsDirProblem, slurmHealth, type NodeView } from '../../worker/slurm/health.js';
import { parseSacct, parseScontrol, parseSqueue, pick, type JobInfo } from '../../worker/slurm/query.js';
import { outcomeOf, SlurmTracker } from '../../worker/slurm/settle.js';
import { scratch } from './helpers.js';

const T = 1_800_000_000; // epoch seconds
const ok = (stdout: string): CommandResult => ({ code: 0, stdout, stderr: '', failure: null });
const fail = (code: number, stderr: string): CommandResult => ({ code, stdout: '', stderr, failure: null });

/** Answers by command; records every call. */
function scripted(answers: Partial<Record<SlurmCommand | 'ping', (args: string[]) => CommandResult>>) {
  const calls: { cmd: SlurmCommand; args: string[] }[] = [];
  const runner: SlurmRunner = {
    async run(cmd, args) {
      calls.push({ cmd, args });
      if (cmd === 'scontrol' && args[0] === 'ping') return answers.ping ? answers.ping(args) : ok('Slurmctld(primary) at vm is UP\n');
      const f = answers[cmd];
      if (!f) throw new Error(`unexpected ${cmd} ${args.join(' ')}`);
      return f(args);
    },
  };
  return { runner, calls, count: (cmd: SlurmCommand) => calls.filter((c) => c.cmd === cmd && !(cmd === 'scontrol' && c.args[0] === 'ping')).length };
}

let box: ReturnType<typeof scratch>;
beforeEach(() => (box = scratch('tend-slurm-poll-')));
afterEach(() => box.remove());

function handle(jobId: string, over: Partial<SlurmHandle> = {}): SlurmHandle {
  const runDir = join(box.dir, `run-${jobId}`);
  mkdirSync(runDir, { recursive: true });
  return { backend: 'slurm', cluster: 'tend', jobId, runDir, runId: `r${jobId}`, submittedAt: (T - 10) * 1000, ...over };
}
const sentinel = (h: SlurmHandle, text: string) => writeFileSync(join(h.runDir, 'exit_code'), `${text}\n`);
const ran = (h: SlurmHandle) => writeFileSync(join(h.runDir, 'pid.json'), '{"wrapperPid":1,"wrapperStartTime":1,"pid":2,"startTime":2}\n');

describe('parsing', () => {
  it('reads squeue, sacct and scontrol lines (epoch times, states with "by uid", exit code:signal)', () => {
    expect(parseSqueue(`12|RUNNING|${T}|${T + 1}|${T + 3600}|None|vm|1:00:00\nnot a line\n`)).toEqual([
      { jobId: '12', state: 'RUNNING', rawState: 'RUNNING', submitAt: T * 1000, startAt: (T + 1) * 1000, endAt: (T + 3600) * 1000, exit: null, reason: null, nodes: 'vm', timeLimit: '1:00:00', source: 'squeue' },
    ]);
    const [a] = parseSacct(`13|CANCELLED by 0|0:15|${T}|${T + 2}|${T + 9}|None|vm|UNLIMITED\n`);
    expect(a).toMatchObject({ jobId: '13', state: 'CANCELLED', rawState: 'CANCELLED by 0', exit: { code: 0, signal: 15 }, endAt: (T + 9) * 1000 });
    const [c] = parseScontrol(`JobId=14 JobName=tend:x y UserId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15 SubmitTime=${T} StartTime=${T + 1} EndTime=Unknown NodeList=vm TimeLimit=00:01:00 Command=/r/slurm.sh\n`);
    expect(c).toMatchObject({ jobId: '14', state: 'TIMEOUT', reason: 'TimeLimit', exit: { code: 0, signal: 15 }, endAt: null, nodes: 'vm', timeLimit: '00:01:00' });
  });

  it('ignores rows submitted before the handle: after a controller reset ids repeat and accounting keeps the old job', () => {
    const old: JobInfo = parseSacct(`7|COMPLETED|0:0|${T - 86400}|${T - 86400}|${T - 86399}|None|vm|UNLIMITED`)[0]!;
    const fresh: JobInfo = parseSacct(`7|RUNNING|0:0|${T}|${T}|Unknown|None|vm|UNLIMITED`)[0]!;
    expect(pick([old], { jobId: '7', submittedAt: T * 1000 })).toBeNull();
    expect(pick([old, fresh], { jobId: '7', submittedAt: T * 1000 })?.state).toBe('RUNNING');
    expect(pick([old], { jobId: '8', submittedAt: null })).toBeNull();
  });
});

describe('poll', () => {
  it('asks squeue once for all jobs, sacct once only for ended jobs without a sentinel, and maps the states', async () => {
    const [q, r, d1, d2, gone, unknown] = ['1', '2', '3', '4', '5', '6'].map((id) => handle(id));
    sentinel(d1!, '0');
    sentinel(gone!, '3'); // forgotten by Slurm but it wrote its exit code
    const s = scripted({
      squeue: () => ok([`1|PENDING|${T}|${T + 60}|NONE|Resources||1:00`, `2|RUNNING|${T}|${T + 1}|NONE|None|vm|1:00`, `3|COMPLETED|${T}|${T + 1}|${T + 2}|None|vm|1:00`, `4|FAILED|${T}|${T + 1}|${T + 2}|NonZeroExitCode|vm|1:00`].join('\n')),
      sacct: (args) => {
        expect(args).toContain('--jobs=4,5,6');
        return ok(`4|FAILED|7:0|${T}|${T + 1}|${T + 2}|None|vm|1:00\n`);
      },
      scontrol: () => ok('ClusterName = tend\n'),
    });
    const tracker = new SlurmTracker({ runner: s.runner, cluster: async () => 'tend', sentinelGraceMs: 0 });
    const states = await tracker.poll([q!, r!, d1!, d2!, gone!, unknown!]);
    expect(states).toEqual([
      { state: 'queued' },
      { state: 'running', startedAt: (T + 1) * 1000, heartbeatAt: null },
      { state: 'done' },
      { state: 'done' },
      { state: 'done' },
      { state: 'lost', reason: expect.stringContaining('Slurm has no record of job 6') },
    ]);
    expect(s.count('squeue')).toBe(1);
    expect(s.count('sacct')).toBe(1);
    // fetch uses what the poll learnt: no further command.
    const before = s.calls.length;
    expect(await tracker.fetch(d2!)).toMatchObject({ exitCode: 7, reason: 'exit 7 (Slurm job 4 FAILED)' });
    expect(await tracker.fetch(d1!)).toMatchObject({ exitCode: 0, reason: null });
    expect(s.calls.length).toBe(before);
  });

  it('falls back to one `scontrol show job` when accounting is off, and stops asking sacct for a while', async () => {
    const h = handle('9');
    const s = scripted({
      squeue: () => ok(`9|TIMEOUT|${T}|${T + 1}|${T + 61}|TimeLimit|vm|1`),
      sacct: () => fail(1, 'sacct: error: Slurm accounting storage is disabled'),
      scontrol: (args) => (args[0] === 'show' && args[1] === 'config' ? ok('ClusterName = tend\n') : ok(`JobId=9 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15 SubmitTime=${T} StartTime=${T + 1} EndTime=${T + 61} NodeList=vm TimeLimit=00:01:00\n`)),
    });
    const tracker = new SlurmTracker({ runner: s.runner, cluster: async () => 'tend', sentinelGraceMs: 0 });
    expect(await tracker.poll([h])).toEqual([{ state: 'done' }]);
    expect(await tracker.fetch(h)).toMatchObject({ exitCode: null, signal: 'TERM', reason: 'Slurm job 9 TIMEOUT: time limit reached (TimeLimit); the routine stopped by TERM' });
    await tracker.poll([h]);
    expect(s.count('sacct')).toBe(1);
    expect(s.calls.filter((c) => c.cmd === 'scontrol' && c.args.includes('job')).length).toBe(2);
  });

  it('asks the controller for the exit code when accounting has not recorded the end yet (slurmdbd lags)', async () => {
    const h = handle('11');
    const s = scripted({
      squeue: () => ok(`11|FAILED|${T}|${T + 1}|${T + 2}|NonZeroExitCode|vm|1`),
      sacct: () => ok(`11|RUNNING|0:0|${T}|${T + 1}|Unknown|None|vm|1\n`),
      scontrol: () => ok(`JobId=11 JobState=FAILED Reason=NonZeroExitCode ExitCode=97:0 SubmitTime=${T} StartTime=${T + 1} EndTime=${T + 2} NodeList=vm TimeLimit=00:01:00\n`),
    });
    const tracker = new SlurmTracker({ runner: s.runner, cluster: async () => 'tend', sentinelGraceMs: 0 });
    expect(await tracker.poll([h])).toEqual([{ state: 'done' }]);
    expect((await tracker.fetch(h)).reason).toMatch(/^Slurm job 11 ran on vm that cannot see the job directory /);
    expect(s.count('sacct')).toBe(1);
    expect(s.count('scontrol')).toBe(1);
  });

  it('fails the whole poll fast when the controller does not answer (nothing is settled)', async () => {
    const s = scripted({ ping: () => ({ ...fail(1, ''), stdout: 'Slurmctld(primary) at vm is DOWN\n' }) });
    const tracker = new SlurmTracker({ runner: s.runner, cluster: async () => 'tend' });
    await expect(tracker.poll([handle('1')])).rejects.toThrow(/controller does not answer/);
    expect(s.count('squeue')).toBe(0);
  });

  it('waits a moment for the sentinel of a job Slurm just ended (a shared filesystem may show it late)', async () => {
    const h = handle('3');
    ran(h);
    let now = (T + 3) * 1000;
    const s = scripted({ squeue: () => ok(`3|COMPLETED|${T}|${T + 1}|${T + 2}|None|vm|1`), sacct: () => ok(`3|COMPLETED|0:0|${T}|${T + 1}|${T + 2}|None|vm|1`) });
    const tracker = new SlurmTracker({ runner: s.runner, cluster: async () => 'tend', sentinelGraceMs: 3000, now: () => now });
    expect((await tracker.poll([h]))[0]!.state).toBe('running');
    now += 5000;
    expect((await tracker.poll([h]))[0]!.state).toBe('done');
  });

  it('does not ask about jobs of another cluster, and says so', async () => {
    const s = scripted({});
    const tracker = new SlurmTracker({ runner: s.runner, cluster: async () => 'tend' });
    const [state] = await tracker.poll([handle('4', { cluster: 'other' })]);
    expect(state).toEqual({ state: 'lost', reason: 'job 4 was submitted to Slurm cluster other; Tend\'s Slurm commands talk to tend' });
    expect(s.calls).toEqual([]);
  });
});

describe('outcomes of every Slurm end state', () => {
  const info = (state: string, exit = '0:0', reason = 'None'): JobInfo => parseSacct(`42|${state}|${exit}|${T}|${T + 1}|${T + 9}|${reason}|vm|1`)[0]!;

  it('COMPLETED with exit 0 is a success; FAILED carries the exit code and the state', () => {
    const h = handle('42');
    sentinel(h, '0');
    expect(outcomeOf(h, info('COMPLETED'), { kind: 'exit', code: 0, at: 5 })).toEqual({ exitCode: 0, signal: null, reason: null, startedAt: (T + 1) * 1000, endedAt: 5 });
    expect(outcomeOf(h, info('FAILED', '3:0'), { kind: 'exit', code: 3, at: 5 }).reason).toBe('exit 3 (Slurm job 42 FAILED)');
    expect(outcomeOf(h, info('FAILED', '3:0'), null)).toMatchObject({ exitCode: 3, reason: 'exit 3 (Slurm job 42 FAILED)' });
  });

  it.each([
    ['CANCELLED by 1000', 'cancelled in Slurm'],
    ['TIMEOUT', 'time limit reached'],
    ['NODE_FAIL', 'the node running it failed'],
    ['OUT_OF_MEMORY', 'out of memory'],
    ['PREEMPTED', 'preempted by another job'],
    ['BOOT_FAIL', 'the node failed to boot'],
    ['DEADLINE', 'deadline reached before it could run'],
  ])('%s names the state and what it means', (state, meaning) => {
    const h = handle('42');
    ran(h);
    const o = outcomeOf(h, info(state, '0:9'), null);
    expect(o.reason).toBe(`Slurm job 42 ${state}: ${meaning}; the routine stopped by KILL`);
    expect(o.signal).toBe('KILL');
    expect(o.exitCode).toBeNull();
    const withSentinel = outcomeOf(h, info(state), { kind: 'signal', signal: 'TERM', at: 1 });
    expect(withSentinel.reason).toBe(`Slurm job 42 ${state}: ${meaning}; the routine stopped by TERM`);
  });

  it('a job Slurm says COMPLETED whose run dir has no sentinel and no record of running is not a success', () => {
    const h = handle('42');
    const o = outcomeOf(h, info('COMPLETED'), null);
    expect(o.exitCode).toBeNull();
    expect(o.reason).toBe(`Slurm job 42 ended COMPLETED and the job directory ${h.runDir} holds no exit code`);
  });

  it('a batch script that could not see the run dir (exit 97) is explained', () => {
    const h = handle('42');
    expect(outcomeOf(h, info('FAILED', '97:0'), null).reason).toMatch(/^Slurm job 42 ran on vm that cannot see the job directory/);
  });
});

describe('health', () => {
  const sinfo = (lines: string[]) => ok(`${lines.join('\n')}\n`);

  it('is ok with the controller up and a usable node on this machine', async () => {
    const s = scripted({ sinfo: () => sinfo(['vm|127.0.0.1|idle|debug*|up']) });
    expect(await slurmHealth({ runner: s.runner, runsDir: box.dir, declaredShared: false })).toEqual({ ok: true, reason: null });
  });

  it('pauses (not ok) when the controller is down, with scontrol ping in the reason', async () => {
    const s = scripted({ ping: () => ({ ...fail(1, ''), stdout: 'Slurmctld(primary) at vm is DOWN\n' }), sinfo: () => sinfo([]) });
    const h = await slurmHealth({ runner: s.runner, runsDir: box.dir, declaredShared: false });
    expect(h.ok).toBe(false);
    expect(h.reason).toMatch(/^the Slurm controller does not answer/);
  });

  it('is not ok when Slurm is not installed, and says so', async () => {
    const runner: SlurmRunner = { run: async (cmd) => ({ code: null, stdout: '', stderr: '', failure: `${cmd} not found on PATH (are Slurm's client commands installed?)` }) };
    expect(await slurmHealth({ runner, runsDir: box.dir, declaredShared: false })).toEqual({ ok: false, reason: "scontrol not found on PATH (are Slurm's client commands installed?)" });
  });

  it('is not ok when no node can run jobs', async () => {
    const s = scripted({ sinfo: () => sinfo(['vm|127.0.0.1|down*|debug*|up', 'vm2|127.0.0.1|drained|debug*|up']) });
    expect((await slurmHealth({ runner: s.runner, runsDir: box.dir, declaredShared: false })).reason).toBe('no Slurm node can run jobs: vm down*, vm2 drained');
    expect(['idle', 'mixed', 'allocated', 'idle+'].every(canRunJobs)).toBe(true);
    expect(['down*', 'idle*', 'drained', 'draining', 'idle~'].some(canRunJobs)).toBe(false);
  });

  it('explains a runs dir on a local filesystem when the nodes are other machines, unless declared shared', async () => {
    const nodes: NodeView[] = [{ name: 'node01', addr: '10.9.8.7', state: 'idle', partition: 'batch', partitionUp: true }];
    const why = await runsDirProblem({ runsDir: box.dir, nodes, declaredShared: false });
    expect(why).toMatch(new RegExp(`^the runs dir ${box.dir} is on a local .* filesystem of this machine, and Slurm's node node01 cannot see it`));
    expect(why).toMatch(/TEND_SLURM_SHARED_FS=1/);
    expect(await runsDirProblem({ runsDir: box.dir, nodes, declaredShared: true })).toBeNull();
    expect(await runsDirProblem({ runsDir: box.dir, nodes: [{ ...nodes[0]!, name: 'vm', addr: '127.0.0.1' }], declaredShared: false })).toBeNull();
  });
});
