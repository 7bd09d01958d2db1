// A run's files (its output, its manifest) are read through the backend that ran it, never from a
// path here: the API's log, follow and run view, the MCP tools and `tend logs`. A real engine and API over a TestBackend whose job directories
// do not exist on disk (a path read would find nothing), and the real pool backend for a worker's
// run: read when the worker's directory is visible here, else said to stay on the worker.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApi, type ApiServer } from '../../main/engine/api/server.js';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import { runLog } from '../../main/engine/mcp/read.js';
import { saveRoutine } from '../../main/engine/ops/routines.js';
import type { RunRow } from '../../main/engine/domain/types.js';
import { baseManifest } from '../../worker/jobdir/jobdir.js';
import { tend } from '../helpers/cli.js';
import { TestBackend } from '../helpers/test-backend.js';
import { call, sse } from './harness.js';

const COMPUTER = 'tester@host';
const WORKER = 'u@w1';
let dir: string;
let backend: TestBackend;
let engine: Engine;
let api: ApiServer;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tend-run-logs-'));
  backend = new TestBackend('local');
  engine = buildEngine({ dataDir: dir, replace: new Map([['local', backend]]), options: { computer: COMPUTER, launchInBackground: false } });
  api = await startApi(engine, { rendererDir: null });
});

afterEach(async () => {
  await api.close();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A run of a routine on `computer`, requested by hand (and launched, when it is this host's). */
async function requested(computer: string, path: string): Promise<RunRow> {
  const id = `${computer}:${path}`;
  saveRoutine(engine.store, { id, command: 'true', cwd: '/', at: '2099-01-01T00:00', tz: 'UTC' }, { now: Date.now(), localComputer: COMPUTER });
  engine.runNow(id);
  await engine.scheduler.pass();
  return engine.store.runs.latest(id)!;
}

const getLog = async (run: RunRow, query = '') => (await call(api.url, 'GET', `/api/runs/${encodeURIComponent(run.id)}/log${query}`, { token: api.token })).json;

async function followed(run: RunRow): Promise<{ chunks: string; end: string }> {
  const s = await sse(api.url, `/api/runs/${encodeURIComponent(run.id)}/log/follow`, api.token);
  await s.done;
  return { chunks: s.events.filter((e) => e.event === 'chunk').map((e) => JSON.parse(e.data) as string).join(''), end: s.events.find((e) => e.event === 'end')?.data ?? '' };
}

describe("a run's log", () => {
  it('is read through the backend that ran it: API log, follow and the MCP tool', async () => {
    const run = await requested(COMPUTER, 'logs/here');
    expect(run.backend).toBe('local');
    expect(existsSync(run.runDir!)).toBe(false);
    backend.write(run.runDir!, 'stdout', 'hello through the backend\n').write(run.runDir!, 'stderr', 'oops\n');

    expect((await getLog(run)).value.text).toBe('hello through the backend\n');
    expect((await getLog(run, '?stream=stderr&tailBytes=3')).value.text).toBe('ps\n');
    expect(await followed(run)).toEqual({ chunks: 'hello through the backend\n', end: '{"reason":"finished"}' });
    expect((await runLog(engine.store, engine.runFiles, run.id, { stream: 'stderr', maxBytes: 100 })).text).toBe('oops\n');
  });

  it("manifest is the backend's: the run view shows what the backend recorded", async () => {
    const run = await requested(COMPUTER, 'logs/manifest');
    const spec = backend.jobs.get(run.id)!.spec;
    const manifest = { ...baseManifest(spec, { tendVersion: 'test', cwd: '/', logCapBytes: 1024, createdAt: 1, bootId: null }), backend: 'local' as const, wrapper: { pid: 1, startTime: 2 }, routine: { pid: 3, startTime: 4 }, startedAt: null };
    backend.manifests.set(run.runDir!, manifest);
    const shown = (await call(api.url, 'GET', `/api/runs/${encodeURIComponent(run.id)}`, { token: api.token })).json.value;
    expect(shown.manifest).toEqual(manifest);
  });

  it("of a worker's run is answered by the pool backend: read when its directory is visible here, else said to stay on the worker", async () => {
    const run = await requested(WORKER, 'logs/there');
    // What a worker's report records: its backend and its own job directory.
    const elsewhere = join(dir, 'not-here', 'runs', run.id);
    engine.store.runs.cas(run.id, [run.status], run.status, { backend: `pool:${WORKER}`, runDir: elsewhere });
    const remote = engine.store.runs.get(run.id)!;

    expect((await getLog(remote)).value.text).toBe('');
    const far = await followed(remote);
    expect(far.chunks).toBe('');
    expect(JSON.parse(far.end).reason).toMatch(`stays on worker ${WORKER}`);

    // `tend logs --follow` likewise ends, saying where the output is, rather than waiting forever.
    const cli = tend(dir, ['logs', run.id, '--follow']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`stays on worker ${WORKER}`);

    // A worker on this machine (or a shared file system): its directory is read.
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'stdout.log'), 'from the worker\n');
    expect((await getLog(remote)).value.text).toBe('from the worker\n');
    expect(tend(dir, ['logs', run.id]).stdout).toBe('from the worker\n');
    const shown = (await call(api.url, 'GET', `/api/runs/${encodeURIComponent(run.id)}`, { token: api.token })).json.value;
    expect(shown.manifest).toBeNull();
    expect(backend.output.size).toBe(0);
  });
});
