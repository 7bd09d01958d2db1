// `tend mcp` driven by the SDK's own Client over stdio, against a real data dir where a real daemon
// ran real routines: what ran, what failed (with the stderr tail, secrets masked), what waits and
// why, definitions, logs, workers, status and doctor; bad arguments named; actions only with
// --allow-actions, carried out by the daemon, refused without one.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readApiFile, writeApiFile } from '../../main/engine/api/auth.js';
import { waitFor } from '../helpers/wait.js';
import { killTracked, scratch, tend, tendOk } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { bodyOf, mcp, type McpSession } from './harness.js';

const FIX = fileURLToPath(new URL('./fixtures/', import.meta.url));
const SECRET_ENV = 'supersecret123';
const SECRET_ARG = 'hunter2secret';
const READ_TOOLS = ['daemon_status', 'doctor', 'failures', 'jobs', 'routine', 'routines', 'run_log', 'runs_today', 'waiting', 'workers'];
const ACTION_TOOLS = ['cancel_job', 'pause_routine', 'post_job', 'restart_routine', 'resume_routine', 'run_routine', 'stop_routine'];

let box: ReturnType<typeof scratch>;
let dir: string;
let daemon: Daemon;
let ro: McpSession;
let me: string; // user@HOST of routines added without one
let offlineJob: number;

beforeAll(async () => {
  box = scratch('tend-mcp-');
  dir = box.dir;
  daemon = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  tendOk(dir, ['routine', 'add', 'talk', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'sh', join(FIX, 'talk.sh')]);
  tendOk(dir, ['routine', 'add', 'leaky', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--env', `API_TOKEN=${SECRET_ENV}`, '--', 'sh', join(FIX, 'leak-and-fail.sh'), '--password', SECRET_ARG]);
  tendOk(dir, ['routine', 'add', 'flaky', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', '10m/1h', '--', 'false']);
  tendOk(dir, ['routine', 'add', 'dl', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'true']);
  tendOk(dir, ['routine', 'add', 'parse', '--in', '1s', '--tz', 'UTC', '--after', 'dl', '--', 'true']);
  tendOk(dir, ['routine', 'add', 'svc', '--realtime', '--', 'sh', join(FIX, 'loop.sh')]);
  const ran = tendOk<{ status: string }>(dir, ['routine', 'run', 'talk', '--json']);
  expect(['RUNNING', 'COMPLETED']).toContain(ran.status);
  tend(dir, ['routine', 'run', 'leaky', '--json']);
  tend(dir, ['routine', 'run', 'flaky', '--json']);
  offlineJob = tendOk<{ id: number }>(dir, ['job', 'post', '--computer', 'bob@faraway', '--json', '--', 'true']).id;
  ro = await mcp(dir);
  const list = await ro.json('routines');
  me = (list.routines as { id: string }[]).find((r) => r.id.endsWith(':talk'))!.id.split(':')[0]!;
  // talk completed, parse is due and waits for dl, svc is running.
  await waitFor(async () => {
    const today = await ro.json('runs_today');
    const runs = today.schedules.flatMap((s: any) => s.runs);
    return runs.some((r: any) => r.routineId.endsWith(':talk') && r.status === 'COMPLETED') && runs.some((r: any) => r.routineId.endsWith(':leaky') && r.status === 'ERROR') && runs.some((r: any) => r.routineId.endsWith(':flaky') && r.attempt === 2) && runs.some((r: any) => r.routineId.endsWith(':parse')) && runs.some((r: any) => r.routineId.endsWith(':svc') && r.status === 'RUNNING');
  }, 20_000, 'talk to complete, leaky to fail, parse to be due and svc to run');
}, 90_000);

afterAll(async () => {
  await ro?.close();
  if (daemon && !daemon.exit) tend(dir, ['routine', 'stop', 'svc']);
  await daemon?.stop();
  await killTracked();
  box?.remove();
});

describe('tend mcp (read-only)', () => {
  it('offers the read tools only, each with a description and a JSON schema', async () => {
    const { tools } = await ro.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(30);
      expect(t.inputSchema.type).toBe('object');
      expect((t.inputSchema as { additionalProperties?: boolean }).additionalProperties, t.name).toBe(false);
    }
    const routine = tools.find((t) => t.name === 'routine')!;
    expect(routine.inputSchema.required).toEqual(['id']);
    expect((routine.inputSchema.properties as Record<string, { description?: string }>).id!.description).toMatch(/user@COMPUTER/);
    expect(tools.find((t) => t.name === 'failures')!.annotations?.readOnlyHint).toBe(true);
  });

  it('runs_today: per schedule, each run with its status and duration', async () => {
    const r = await ro.call('runs_today');
    expect(r.isError).toBe(false);
    expect(r.text.split('\n')[0]).toMatch(/^\d+ run\(s\) on \d{4}-\d{2}-\d{2}$/);
    const today = bodyOf(r.text);
    const def = today.schedules.find((s: any) => s.schedule === 'default');
    expect(def).toBeTruthy();
    const talk = def.runs.find((x: any) => x.routineId === `${me}:talk`);
    expect(talk).toMatchObject({ status: 'COMPLETED', exitCode: 0, kind: 'batch', manual: true });
    expect(talk.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(talk.startedAt)).toBeLessThanOrEqual(Date.parse(talk.endedAt));
    const leaky = def.runs.find((x: any) => x.routineId === `${me}:leaky`);
    expect(leaky).toMatchObject({ status: 'ERROR', exitCode: 4 });
    expect(def.counts.COMPLETED).toBeGreaterThanOrEqual(1);
    expect(def.counts.ERROR).toBeGreaterThanOrEqual(1);
    // Another day has nothing.
    const other = await ro.json('runs_today', { day: '2001-02-03' });
    expect(other).toMatchObject({ day: '2001-02-03', total: 0, schedules: [] });
    // Bounded: a limit of 1 shows one run and says it is truncated.
    const one = await ro.json('runs_today', { limit: 1 });
    expect(one.schedules.flatMap((s: any) => s.runs)).toHaveLength(1);
    expect(one.truncated).toBe(true);
  });

  it('failures: the exit reason and the tail of stderr, secrets masked', async () => {
    const f = await ro.json('failures');
    const run = f.runs.find((x: any) => x.routineId === `${me}:leaky`);
    expect(run).toMatchObject({ status: 'ERROR', exitCode: 4, exitReason: 'exit code 4', schedule: 'default' });
    expect(run.stderrTail).toContain('error: token *** rejected by the server');
    const raw = JSON.stringify(f);
    expect(raw).not.toContain(SECRET_ENV);
    expect(raw).not.toContain(SECRET_ARG);
    expect(f.runs.some((x: any) => x.routineId === `${me}:talk`)).toBe(false);
    // The tail is bounded by stderrBytes.
    const small = await ro.json('failures', { stderrBytes: 10 });
    expect(small.runs[0].stderrTail.length).toBeLessThanOrEqual(10);
    // Nothing failed in the last 36 seconds of an hour ago… i.e. a window with no failures is empty.
    const none = await ro.json('failures', { sinceHours: 0.01 });
    expect(none.runs.filter((x: any) => Date.parse(x.endedAt) < Date.now() - 60_000)).toEqual([]);
  });

  it('waiting: a dependency, a worker that never connected, with reasons', async () => {
    const w = await ro.json('waiting');
    expect(w.daemon).toMatchObject({ running: true, pid: daemon.pid });
    const parse = w.items.find((i: any) => i.routineId === `${me}:parse`);
    expect(parse).toMatchObject({ kind: 'run', category: 'dependency' });
    expect(parse.status).toMatch(/^(PENDING|DELAYED)$/);
    expect(parse.reason).toContain(`waiting for ${me}:dl (not run on `);
    const job = w.items.find((i: any) => i.jobId === offlineJob);
    expect(job).toMatchObject({ kind: 'job', status: 'PENDING', category: 'worker' });
    expect(job.reason).toContain('bob@faraway has never connected');
    // flaky failed and its retry waits for its time.
    const retry = w.items.find((i: any) => i.routineId === `${me}:flaky`);
    expect(retry).toMatchObject({ kind: 'run', status: 'PENDING', category: 'time' });
    expect(retry.reason).toMatch(/^retry at \d{4}-.*Z \(attempt 2\)$/);
    // svc is running: not waiting; talk and leaky are done.
    expect(w.items.some((i: any) => i.routineId === `${me}:svc`)).toBe(false);
    expect(w.items.some((i: any) => i.routineId === `${me}:talk`)).toBe(false);
  });

  it('routine: the definition with secrets masked, next runs, history; short ids work', async () => {
    const r = await ro.json('routine', { id: 'leaky' });
    expect(r.id).toBe(`${me}:leaky`);
    expect(r.definition.env).toEqual({ API_TOKEN: '***' });
    expect(r.definition.args).toEqual([join(FIX, 'leak-and-fail.sh'), '--password', '***']);
    expect(r.nextRuns).toEqual(['2099-01-01T00:00:00.000Z']);
    expect(r.history[0]).toMatchObject({ status: 'ERROR', exitCode: 4 });
    expect(JSON.stringify(r)).not.toContain(SECRET_ENV);
    const dl = await ro.json('routine', { id: `${me}:dl` });
    expect(dl.dependents).toEqual([`${me}:parse`]);
    const missing = await ro.call('routine', { id: 'no/such/routine' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain(`routine ${me}:no/such/routine not found`);
  });

  it('run_log: the tail of a run (or a routine’s latest run), bounded, secrets masked', async () => {
    const out = await ro.call('run_log', { id: 'talk' });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/^run \S+ of .*:talk \(COMPLETED\), stdout:\n/);
    expect(out.text).toContain('hello from stdout');
    expect((await ro.call('run_log', { id: 'talk', stream: 'stderr' })).text).toContain('warning from stderr');
    const leak = await ro.call('run_log', { id: `${me}:leaky` });
    expect(leak.text).toContain('starting with token ***');
    expect(leak.text).not.toContain(SECRET_ENV);
    const tiny = await ro.call('run_log', { id: 'talk', maxBytes: 6 });
    expect(tiny.text.split('\n').slice(1).join('\n')).toBe('tdout\n');
    const today = await ro.json('runs_today');
    const runId = today.schedules.flatMap((s: any) => s.runs).find((x: any) => x.routineId === `${me}:talk`).id;
    expect((await ro.call('run_log', { id: runId })).text).toContain('hello from stdout');
  });

  it('workers, jobs, daemon_status and doctor', async () => {
    const w = await ro.json('workers');
    expect(w.thisHost).toBe(me);
    expect(Array.isArray(w.workers)).toBe(true);
    const j = await ro.json('jobs', { status: 'PENDING' });
    expect(j.jobs.map((x: any) => x.id)).toContain(offlineJob);
    const s = await ro.call('daemon_status');
    expect(s.text.split('\n')[0]).toBe('daemon healthy');
    expect(bodyOf(s.text)).toMatchObject({ healthy: true, owner: { pid: daemon.pid, alive: true } });
    const d = await ro.json('doctor');
    expect(d.find((f: any) => f.id === 'routine-error' && f.message.includes(`${me}:leaky`))).toBeTruthy();
  });

  it('bad arguments: an MCP error naming the argument; unknown tools and action tools do not exist', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['routine', { id: 5 }, /\bid\b/],
      ['routine', {}, /\bid\b/],
      ['run_log', { id: 'talk', maxBytes: 10_000_000 }, /maxBytes/],
      ['run_log', { id: 'talk', stream: 'stdin' }, /stream/],
      ['runs_today', { day: 'yesterday' }, /day/],
      ['failures', { sinceHours: -1 }, /sinceHours/],
      ['jobs', { status: 'DONE' }, /status/],
      ['waiting', { bogus: true }, /bogus/],
    ];
    for (const [tool, args, named] of cases) {
      const r = await ro.call(tool, args);
      expect(r.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(r.text, `${tool} ${JSON.stringify(args)}`).toMatch(/Invalid arguments|MCP error -32602/);
      expect(r.text, `${tool} ${JSON.stringify(args)}`).toMatch(named);
    }
    for (const name of ['restart_routine', 'no_such_tool']) {
      const r = await ro.call(name, { id: 'talk' });
      expect(r.isError).toBe(true);
      expect(r.text).toContain(`Tool ${name} not found`);
    }
  });
});

describe('tend mcp --allow-actions', () => {
  it('offers the action tools, which say what they did and are carried out by the daemon', async () => {
    const s = await mcp(dir, ['--allow-actions']);
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...ACTION_TOOLS, ...READ_TOOLS].sort());

      const run = await s.call('run_routine', { id: 'talk' });
      expect(run.isError, run.text).toBe(false);
      const runId = bodyOf(run.text).id as string;
      expect(run.text.split('\n')[0]).toBe(`queued run ${runId} of ${me}:talk (PENDING); the daemon starts it on its next pass`);
      await waitFor(async () => (await s.json('routine', { id: 'talk' })).history.find((h: any) => h.id === runId)?.status === 'COMPLETED', 15_000, 'the manual run to complete');

      const before = (await s.json('routine', { id: 'svc' })).history[0];
      expect(before.status).toBe('RUNNING');
      const restart = await s.call('restart_routine', { id: 'svc' });
      expect(restart.isError, restart.text).toBe(false);
      expect(restart.text.split('\n')[0]).toMatch(new RegExp(`^restarted ${me}:svc: stopped ${before.id} \\(STOPPED\\); started run \\S+ \\(STARTING\\)$`));
      await waitFor(async () => (await s.json('routine', { id: 'svc' })).history[0].status === 'RUNNING', 15_000, 'svc to run again');

      const stop = await s.call('stop_routine', { id: 'svc' });
      expect(stop.text.split('\n')[0]).toMatch(new RegExp(`^stopped ${me}:svc: \\S+ \\(STOPPED\\)$`));
      expect((await s.call('stop_routine', { id: 'svc' })).text.split('\n')[0]).toBe(`${me}:svc: nothing was running, nothing was stopped`);
      const waiting = await s.json('waiting');
      expect(waiting.items.find((i: any) => i.routineId === `${me}:svc`)).toMatchObject({ category: 'stopped' });

      const pause = await s.call('pause_routine', { id: 'dl' });
      expect(pause.text.split('\n')[0]).toBe(`paused ${me}:dl: its trigger is paused; resume it with resume_routine`);
      expect((await s.json('routine', { id: 'dl' })).trigger).toBe('paused');
      const resume = await s.call('resume_routine', { id: 'dl' });
      expect(resume.text.split('\n')[0]).toBe(`resumed ${me}:dl: scheduled, next run at 2099-01-01T00:00:00.000Z`);

      const post = await s.call('post_job', { command: 'sh', args: ['-c', 'echo job-output'], name: 'mcp job' });
      expect(post.isError, post.text).toBe(false);
      const jobId = bodyOf(post.text).id as number;
      expect(post.text.split('\n')[0]).toBe(`posted job ${jobId} (PENDING)`);
      await waitFor(async () => (await s.json('jobs', { status: 'COMPLETED' })).jobs.some((j: any) => j.id === jobId), 15_000, 'the posted job to complete');

      const cancel = await s.call('cancel_job', { id: offlineJob });
      expect(cancel.text.split('\n')[0]).toBe(`cancelled job ${offlineJob} (now CANCEL)`);

      // The daemon's refusals come back as tool errors, arguments are validated first.
      const again = await s.call('cancel_job', { id: offlineJob });
      expect(again.isError).toBe(true);
      expect(again.text).toContain(`CONFLICT: job ${offlineJob} is CANCEL already`);
      const badJob = await s.call('post_job', { command: '' });
      expect(badJob.isError).toBe(true);
      expect(badJob.text).toMatch(/command/);
      const badEnv = await s.call('post_job', { command: 'true', env: { 'not valid': 'x' } });
      expect(badEnv.isError).toBe(true);
      expect(badEnv.text).toMatch(/env/);
      const unknown = await s.call('run_routine', { id: 'no/such' });
      expect(unknown.isError).toBe(true);
      expect(unknown.text).toContain('not found');
      // The daemon's own code, not one guessed for it (a refused token used to come back UNAVAILABLE).
      const api = readApiFile(dir)!;
      writeApiFile(dir, { ...api, token: 'not-the-token' });
      try {
        const refused = await s.call('run_routine', { id: 'talk' });
        expect(refused.isError).toBe(true);
        expect(refused.text).toBe('UNAUTHORIZED: missing or wrong bearer token');
      } finally {
        writeApiFile(dir, api);
      }
    } finally {
      await s.close();
    }
  }, 90_000);

  it('without a daemon, actions are refused with a clear message and read tools keep working', async () => {
    await daemon.stop();
    const s = await mcp(dir, ['--allow-actions']);
    try {
      const r = await s.call('run_routine', { id: 'talk' });
      expect(r.isError).toBe(true);
      expect(r.text).toContain('no daemon owns the data dir, so nothing was done');
      expect(r.text).toContain('tend daemon ensure');
      const w = await s.json('waiting');
      expect(w.daemon.running).toBe(false);
      expect(w.items.find((i: any) => i.routineId === `${me}:parse`).reason).toContain(`waiting for ${me}:dl`);
      const st = await s.call('daemon_status');
      expect(st.text.split('\n')[0]).toBe('no daemon running: nothing is being scheduled');
    } finally {
      await s.close();
    }
  }, 60_000);
});
