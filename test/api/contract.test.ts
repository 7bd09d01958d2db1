// The routes mirror the typed contract: definitions (with the CLI's validation), control, schedules,
// batch jobs, runs and their logs, workers, daemon status and doctor, the event stream and the
// OpenAPI document — over real HTTP, against a real engine whose loop runs real processes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueWorkerToken } from '../../main/engine/api/auth.js';
import { ROUTES } from '../../contract/routes.js';
import { localComputer } from '../../main/engine/domain/schema.js';
import { scratch, tend } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { apiSandbox, call, sse, type ApiSandbox } from './harness.js';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const ME = localComputer();
const enc = encodeURIComponent;

let api: ApiSandbox;
beforeAll(async () => {
  api = await apiSandbox({ loop: true });
});
afterAll(() => api.close());

const ok = async (method: string, path: string, body?: unknown) => {
  const r = await api.admin(method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${r.text}`);
  expect(r.json.ok).toBe(true);
  return r.json.value;
};
const runOf = async (runId: string) => ok('GET', `/api/runs/${enc(runId)}`);

describe('definitions', () => {
  const id = `${ME}:api/echo`;

  it('a bad cron is refused with 400 naming `cron`, with the message the CLI gives, and nothing is stored', async () => {
    const r = await api.admin('POST', '/api/routines', { id, cron: 'every morning', command: 'true' });
    expect(r.status).toBe(400);
    expect(r.json.ok).toBe(false);
    expect(r.json.error.code).toBe('INVALID');
    const issue = r.json.error.issues.find((i: { path: string }) => i.path === 'cron');
    expect(issue).toBeDefined();
    // The same validation as `tend routine add`: the CLI prints the same message for --cron.
    const box = scratch('tend-api-cli-');
    const cli = tend(box.dir, ['routine', 'add', id, '--cron', 'every morning', '--', 'true']);
    box.remove();
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain(`--cron: ${issue.message}`);
    expect(await ok('GET', '/api/routines')).toEqual([]);
  });

  it('other bad fields are named by their path; unknown fields are refused', async () => {
    const r = await api.admin('POST', '/api/routines', { id, every: '0s', tz: 'Mars/Base', command: 'true', colour: 'blue' });
    expect(r.status).toBe(400);
    const paths = r.json.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['every', 'tz']));
    expect(paths.some((p: string) => p === 'colour' || p === '')).toBe(true);
    expect(await ok('GET', '/api/routines')).toEqual([]);
  });

  it('create, show, list, edit (only given fields change), a refused edit changes nothing, remove', async () => {
    const created = await ok('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', retry: 'none', command: 'sh', args: ['-c', 'echo hello-from-api; echo oops >&2'], env: { API_TOKEN: 's3cret' } });
    expect(created).toMatchObject({ id, kind: 'batch', command: 'sh', timing: { mode: 'at' } });
    expect(JSON.stringify(created)).not.toContain('s3cret');
    const dup = await api.admin('POST', '/api/routines', { id, at: '2099-01-01T00:00', command: 'true' });
    expect(dup.status).toBe(409);

    const shown = await ok('GET', `/api/routines/${enc(id)}`);
    expect(shown).toMatchObject({ id, trigger: 'scheduled', nextRun: '2099-01-01T00:00:00.000Z', definition: { id } });
    expect((await ok('GET', '/api/routines')).map((r: { id: string }) => r.id)).toEqual([id]);

    const edited = await ok('PUT', `/api/routines/${enc(id)}`, { changes: { name: 'Echo', tolerance: '10m' } });
    expect(edited).toMatchObject({ id, name: 'Echo', toleranceMs: 600_000, command: 'sh', timing: { mode: 'at' } });
    const bad = await api.admin('PUT', `/api/routines/${enc(id)}`, { changes: { cron: '99 * * * *' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.issues.map((i: { path: string }) => i.path)).toContain('cron');
    expect((await ok('GET', `/api/routines/${enc(id)}`)).definition).toMatchObject({ name: 'Echo', timing: { mode: 'at' } });
  });

  it('run: the run is queued, started by the loop, completes; its manifest and both logs are served', async () => {
    const run = await ok('POST', `/api/routines/${enc(id)}/run`);
    expect(run).toMatchObject({ status: 'PENDING', manual: true });
    await waitFor(async () => (await runOf(run.id)).status === 'COMPLETED', 20_000, 'the run to complete');
    const shown = await runOf(run.id);
    expect(shown).toMatchObject({ id: run.id, routineId: id, exitCode: 0, manifest: { runId: run.id, routineId: id } });
    expect((await ok('GET', `/api/runs/${enc(run.id)}/log`)).text).toBe('hello-from-api\n');
    expect((await ok('GET', `/api/runs/${enc(run.id)}/log?stream=stderr`)).text).toBe('oops\n');
    expect((await ok('GET', `/api/runs/${enc(run.id)}/log?tailBytes=5`)).text).toBe('-api\n');
    expect((await ok('GET', '/api/runs')).map((r: { id: string }) => r.id)).toContain(run.id);
    // Following a finished run: its output, then the end.
    const follow = await sse(api.url, `/api/runs/${enc(run.id)}/log/follow`, api.token);
    await follow.done;
    expect(follow.events.filter((e) => e.event === 'chunk').map((e) => JSON.parse(e.data)).join('')).toBe('hello-from-api\n');
    expect(follow.events.at(-1)).toMatchObject({ event: 'end', data: '{"reason":"finished"}' });
    expect((await ok('GET', `/api/routines/${enc(id)}`)).history[0]).toMatchObject({ id: run.id, status: 'COMPLETED' });
  });

  it('remove: gone from the list, then 404; its run history stays', async () => {
    expect(await ok('DELETE', `/api/routines/${enc(id)}`)).toEqual({ id, removed: true });
    expect((await api.admin('GET', `/api/routines/${enc(id)}`)).status).toBe(404);
    expect((await api.admin('DELETE', `/api/routines/${enc(id)}`)).status).toBe(404);
    expect(await ok('GET', '/api/routines')).toEqual([]);
    expect((await ok('GET', '/api/runs')).length).toBe(1);
  });
});

describe('control of a running routine', () => {
  const id = `${ME}:api/hang`;

  it('run → RUNNING, restart → a new run, stop → ended; pause, resume and clear', async () => {
    await ok('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', retry: 'none', command: 'sh', args: [join(FIX, 'hang.sh')] });
    const first = await ok('POST', `/api/routines/${enc(id)}/run`);
    await waitFor(async () => (await runOf(first.id)).status === 'RUNNING', 20_000, 'the first run to be RUNNING');
    // A second manual run while one is running is a conflict, not a duplicate.
    expect((await api.admin('POST', `/api/routines/${enc(id)}/run`)).status).toBe(409);

    const restarted = await ok('POST', `/api/routines/${enc(id)}/restart`);
    expect(restarted.stopped.map((r: { id: string }) => r.id)).toEqual([first.id]);
    expect(restarted.started.id).not.toBe(first.id);
    expect((await runOf(first.id)).status).not.toBe('RUNNING');
    await waitFor(async () => (await runOf(restarted.started.id)).status === 'RUNNING', 20_000, 'the restarted run to be RUNNING');

    const stopped = await ok('POST', `/api/routines/${enc(id)}/stop`);
    expect(stopped.map((r: { id: string }) => r.id)).toEqual([restarted.started.id]);
    await waitFor(async () => !['RUNNING', 'STARTING', 'PENDING'].includes((await runOf(restarted.started.id)).status), 10_000, 'the run to end');
    const pid = (await runOf(restarted.started.id)).manifest.routine.pid as number;
    expect(() => process.kill(pid, 0)).toThrow();

    // A body of JSON null, a list or a scalar is refused, even where the route takes no arguments.
    for (const raw of ['null', '[]', '1', '"x"']) {
      const r = await call(api.url, 'POST', `/api/routines/${enc(id)}/pause`, { token: api.token, raw });
      expect(r.status, raw).toBe(400);
      expect(r.json.error.message).toBe('the body must be a JSON object');
    }
    expect((await ok('GET', `/api/routines/${enc(id)}`)).trigger).toBe('scheduled');
    expect(await ok('POST', `/api/routines/${enc(id)}/pause`)).toMatchObject({ state: 'paused' });
    expect((await ok('GET', `/api/routines/${enc(id)}`)).trigger).toBe('paused');
    expect(await ok('POST', `/api/routines/${enc(id)}/resume`)).toMatchObject({ state: 'scheduled' });
    expect(await ok('POST', `/api/routines/${enc(id)}/clear`)).toMatchObject({ state: 'scheduled', failCount: 0 });
    await ok('DELETE', `/api/routines/${enc(id)}`);
  });

  it('unknown ids are 404 on every routine, job and run route', async () => {
    const ghost = enc(`${ME}:api/ghost`);
    for (const [m, p] of [
      ['GET', `/api/routines/${ghost}`],
      ['PUT', `/api/routines/${ghost}`],
      ['DELETE', `/api/routines/${ghost}`],
      ...['pause', 'resume', 'clear', 'run', 'restart', 'stop'].map((a) => ['POST', `/api/routines/${ghost}/${a}`]),
      ['GET', '/api/jobs/424242'],
      ['POST', '/api/jobs/424242/cancel'],
      ['GET', '/api/runs/no-such-run'],
      ['GET', '/api/runs/no-such-run/log'],
      ['GET', '/api/runs/no-such-run/log/follow'],
      ['POST', '/api/schedules/nosuch/mode'],
    ] as const) {
      const body = m === 'PUT' ? { changes: { name: 'x' } } : p.endsWith('/mode') ? { mode: 'observe' } : undefined;
      const r = await api.admin(m, p, body);
      expect(r.status, `${m} ${p}: ${r.text}`).toBe(404);
      expect(r.json.error.code).toBe('NOT_FOUND');
    }
  });
});

describe('ids that are not even UTF-8', () => {
  it('a path parameter with a lone surrogate or a broken escape is 400, not 500', async () => {
    for (const p of ['/api/jobs/%ED%A0%80', '/api/routines/%ED%A0%80', '/api/runs/%ED%A0%80/log', '/api/routines/%C3']) {
      const r = await api.admin('GET', p);
      expect(r.status, `${p}: ${r.text}`).toBe(400);
      expect(r.json.ok).toBe(false);
    }
    // Nothing was logged as a fault of the API itself.
    const faults = (await ok('GET', '/api/events/recent?limit=1000')).filter((e: { type: string }) => e.type === 'api:fault');
    expect(faults).toEqual([]);
  });
});

describe('schedules', () => {
  it('observe-only and back to active', async () => {
    const id = `${ME}:api/sched`;
    await ok('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', command: 'true' });
    expect(await ok('GET', '/api/schedules')).toEqual([expect.objectContaining({ name: 'default', mode: 'active' })]);
    expect(await ok('POST', '/api/schedules/default/mode', { mode: 'observe' })).toEqual({ name: 'default', mode: 'observe' });
    expect(await ok('GET', '/api/schedules')).toEqual([expect.objectContaining({ name: 'default', mode: 'observe' })]);
    expect((await ok('GET', `/api/routines/${enc(id)}`)).observeOnly).toBe(true);
    const bad = await api.admin('POST', '/api/schedules/default/mode', { mode: 'sleepy' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.issues[0].path).toBe('mode');
    await ok('POST', '/api/schedules/default/mode', { mode: 'active' });
    expect((await ok('GET', `/api/routines/${enc(id)}`)).observeOnly).toBe(false);
    await ok('DELETE', `/api/routines/${enc(id)}`);
  });
});

describe('batch jobs', () => {
  it('post, list, show; a running job cancelled; bad input named by path', async () => {
    const done = await ok('POST', '/api/jobs', { command: 'sh', args: ['-c', 'echo job-out'], name: 'quick' });
    expect(done).toMatchObject({ id: expect.any(Number), status: 'PENDING', name: 'quick' });
    await waitFor(async () => (await ok('GET', `/api/jobs/${done.id}`)).status === 'COMPLETED', 20_000, 'the job to complete');

    const slow = await ok('POST', '/api/jobs', { command: 'sh', args: [join(FIX, 'hang.sh')] });
    await waitFor(async () => (await ok('GET', `/api/jobs/${slow.id}`)).status === 'RUNNING', 20_000, 'the job to run');
    const cancelled = await ok('POST', `/api/jobs/${slow.id}/cancel`);
    expect(cancelled).toMatchObject({ id: slow.id, status: 'CANCEL' });
    expect((await api.admin('POST', `/api/jobs/${slow.id}/cancel`)).status).toBe(409);

    expect((await ok('GET', '/api/jobs')).map((j: { id: number }) => j.id).sort()).toEqual([done.id, slow.id].sort());
    expect((await ok('GET', '/api/jobs?status=CANCEL')).map((j: { id: number }) => j.id)).toEqual([slow.id]);
    expect((await api.admin('GET', '/api/jobs?status=NOPE')).json.error.issues[0].path).toBe('status');

    const bad = await api.admin('POST', '/api/jobs', { command: '', after: [999_999], env: { 'BAD-NAME': 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['command']));
    const dep = await api.admin('POST', '/api/jobs', { command: 'true', after: [999_999] });
    expect(dep.status).toBe(400);
    expect(dep.json.error.issues[0].path).toBe('after.0');
    expect((await ok('GET', '/api/jobs')).length).toBe(2);
  });
});

describe('workers, daemon status and doctor, recent events', () => {
  it('a registered worker is listed; status and doctor answer for this data dir', async () => {
    issueWorkerToken(api.engine.store, 'me@listed', Date.now());
    expect(await ok('GET', '/api/workers')).toEqual(expect.arrayContaining([expect.objectContaining({ computer: 'me@listed', lastSeen: null })]));
    const status = await ok('GET', '/api/daemon/status');
    expect(status).toMatchObject({ dataDir: api.dir, jobs: expect.any(Object), runs: expect.any(Object), inFlight: expect.any(Number) });
    const findings = await ok('GET', '/api/daemon/doctor');
    expect(findings.map((f: { id: string }) => f.id)).toContain('worker-not-seen');
    for (const f of findings) expect(f).toEqual({ id: expect.any(String), severity: expect.stringMatching(/^(ok|info|warn|error)$/), message: expect.any(String), action: f.action === null ? null : expect.any(String) });
    const recent = await ok('GET', '/api/events/recent?limit=5');
    expect(recent.length).toBeLessThanOrEqual(5);
    expect(recent.length).toBeGreaterThan(0);
  });
});

describe('the event stream', () => {
  it('delivers routine:created after a POST, and rows written by another process (the CLI)', async () => {
    const stream = await sse(api.url, '/api/events', api.token);
    try {
      expect(stream.status).toBe(200);
      const id = `${ME}:api/evented`;
      await ok('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', command: 'true' });
      await waitFor(() => stream.events.some((e) => e.event === 'event' && JSON.parse(e.data).type === 'routine:created' && JSON.parse(e.data).routineId === id), 5000, 'routine:created on the stream');
      // The CLI writes to the same database from its own process.
      const cli = tend(api.dir, ['routine', 'pause', id]);
      expect(cli.code, cli.stderr).toBe(0);
      await waitFor(() => stream.events.some((e) => e.event === 'event' && JSON.parse(e.data).type === 'routine:paused'), 5000, 'routine:paused from the CLI');
      // Each event once, in id order.
      const ids = stream.events.filter((e) => e.event === 'event').map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
      await ok('DELETE', `/api/routines/${enc(id)}`);
    } finally {
      stream.close();
      await stream.done;
    }
  });

  it('?after=ID replays what was missed; a junk `after` is 400', async () => {
    const stream = await sse(api.url, '/api/events?after=0', api.token);
    try {
      await waitFor(() => stream.events.some((e) => e.event === 'event' && JSON.parse(e.data).type === 'routine:created'), 5000, 'the replay');
      expect(Number(stream.events.find((e) => e.event === 'event')!.id)).toBe(1);
    } finally {
      stream.close();
      await stream.done;
    }
    expect((await api.admin('GET', '/api/events?after=banana')).status).toBe(400);
  });
});

describe('the OpenAPI document', () => {
  it('lists exactly the routes the router holds, with the auth each needs', async () => {
    const doc = await api.admin('GET', '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toMatch(/^3\.1/);
    const documented: string[] = [];
    for (const [path, ops] of Object.entries(doc.json.paths as Record<string, Record<string, { security: unknown[]; operationId: string; 'x-scope': string }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        documented.push(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
        const route = api.server.routes.find((r) => r.method === method.toUpperCase() && r.url === path.replace(/\{(\w+)\}/g, ':$1'));
        expect(op.security.length === 0, `${method} ${path}`).toBe(route?.scope === 'public');
        expect(op['x-scope'], `${method} ${path}`).toBe(route?.scope);
      }
    }
    const registered = api.server.routes.map((r) => `${r.method} ${r.url}`);
    expect(documented.sort()).toEqual(registered.sort());
    // Every contract channel is an operation.
    const ops = Object.values(doc.json.paths as Record<string, Record<string, { operationId: string }>>).flatMap((o) => Object.values(o).map((x) => x.operationId));
    for (const channel of Object.keys(ROUTES)) expect(ops).toContain(channel);
  });

  it('api.json written by this server names it', () => {
    const file = JSON.parse(readFileSync(join(api.dir, 'api.json'), 'utf8'));
    expect(file.url).toBe(api.url);
  });
});
