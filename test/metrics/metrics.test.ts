// GET /metrics on a real engine (real SQLite file, real local processes) serving the HTTP API: the
// Prometheus text format, read back with a Prometheus text-format parser and checked against what
// actually ran.
import parsePrometheusTextFormat, { type ParsedFamily, type ParsedSample } from 'parse-prometheus-text-format';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiServer } from '../../main/engine/api/server.js';
import { localComputer } from '../../main/engine/domain/schema.js';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import { collectMetrics, PassStats, RUN_DURATION_BOUNDS } from '../../main/engine/metrics/collect.js';
import { DEFAULT_SETTINGS, settings } from '../../main/engine/settings.js';
import { escapeLabelValue, Exposition } from '../../main/engine/metrics/prom.js';
import { postJob } from '../../main/engine/ops/jobs.js';
import { pauseRoutine, saveRoutine } from '../../main/engine/ops/routines.js';
import { waitFor } from '../helpers/wait.js';

// Routines of this host run on the local backend (real processes).
const HOST = localComputer();
const OK = `${HOST}:reports/ok`;
const BAD = `${HOST}:reports/bad`;
const WEIRD = `${HOST}:odd "quoted" \\ path`;
const IDLE = `${HOST}:idle`;
const SLOW = `${HOST}:slow`;

let dir: string;
let engine: Engine;
let api: ApiServer;

const families = (text: string) => new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
const family = (m: Map<string, ParsedFamily>, name: string): ParsedFamily => {
  const f = m.get(name);
  if (!f) throw new Error(`no metric family ${name}`);
  return f;
};
const sample = (f: ParsedFamily, labels: Record<string, string>): ParsedSample | undefined =>
  f.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v) && Object.keys(s.labels ?? {}).length === Object.keys(labels).length);
const value = (f: ParsedFamily, labels: Record<string, string> = {}): number => {
  const s = sample(f, labels);
  if (!s) throw new Error(`${f.name}: no sample ${JSON.stringify(labels)} among ${JSON.stringify(f.metrics.map((x) => x.labels))}`);
  return Number(s.value);
};

/**
 * One series of a labelled histogram, parsed on its own: this parser folds the series of a
 * labelled histogram into one, so the family's lines with these labels are taken out, the labels
 * dropped, and the result parsed as an unlabelled histogram.
 */
function histogramSeries(text: string, name: string, labels: Record<string, string>): ParsedSample | undefined {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  const lines = text.split('\n').filter((l) => l === `# TYPE ${name} histogram` || l.startsWith(`# HELP ${name} `) || (new RegExp(`^${name}_(bucket|sum|count)\\{`).test(l) && pairs.every((p) => l.includes(p))));
  const stripped = lines.map((l) => {
    let out = l;
    for (const p of pairs) out = out.replace(`${p},`, '').replace(p, '');
    return out.replace(/\{,?\}/, '').replace(/,\}/, '}');
  });
  return parsePrometheusTextFormat(`${stripped.join('\n')}\n`).find((f) => f.name === name)?.metrics[0];
}

async function scrape(token: string | null = api.token): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${api.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** Every line is a comment or `name{labels} value`; every sample's family was typed before it. */
function assertWellFormed(text: string): void {
  const typed = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const t = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$/.exec(line);
    if (t) {
      expect(typed.has(t[1]!), `${t[1]} typed twice`).toBe(false);
      typed.set(t[1]!, t[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\n"])*",?)*\})? (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(line);
    expect(m, `malformed line: ${line}`).toBeTruthy();
    const name = m![1]!;
    const base = typed.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    expect(typed.has(base), `sample before its TYPE: ${line}`).toBe(true);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tend-metrics-'));
  engine = buildEngine({ dataDir: dir, intervalMs: 50, options: { killGraceMs: 1000 } });
  const now = Date.now();
  const define = (id: string, command: string, args: string[] = []) =>
    saveRoutine(engine.store, { id, command, args, at: '2099-01-01T00:00', tz: 'UTC', retry: 'none' }, { now, localComputer: HOST });
  define(OK, 'sh', ['-c', 'sleep 0.2']);
  define(BAD, 'sh', ['-c', 'echo no >&2; exit 3']);
  define(WEIRD, 'true');
  define(IDLE, 'true');
  pauseRoutine(engine.store, IDLE, now);
  api = await startApi(engine, {});
  engine.start();
  const runs = [engine.runNow(OK), engine.runNow(BAD), engine.runNow(WEIRD)];
  postJob(engine.store, { command: 'true' }, now);
  await waitFor(
    () => runs.every((r) => ['COMPLETED', 'ERROR'].includes(engine.store.runs.get(r.id)!.status)) && engine.store.jobs.counts().COMPLETED === 1,
    20_000,
    'the runs and the job to finish',
  );
  const second = engine.runNow(OK);
  await waitFor(() => engine.store.runs.get(second.id)!.status === 'COMPLETED', 20_000, 'the second run of ok');
  // Two workers: one heard from just now, one long silent.
  engine.store.pool.seen('me@worker1', Date.now(), { version: '0.1.0', slots: 2, running: 0 });
  engine.store.pool.seen('me@worker2', Date.now() - DEFAULT_SETTINGS.workerOfflineMs - 60_000, { version: '0.1.0', slots: 2, running: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await engine?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /metrics', () => {
  it('needs the admin token by default, and answers in the Prometheus text format', async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape('wrong')).status).toBe(401);
    const r = await scrape();
    expect(r.status).toBe(200);
    expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.text.endsWith('\n')).toBe(true);
    assertWellFormed(r.text);
    const m = families(r.text);
    expect([...m.keys()]).toEqual(
      expect.arrayContaining([
        'tend_runs_total',
        'tend_run_duration_seconds',
        'tend_routines',
        'tend_batch_jobs',
        'tend_pass_duration_seconds',
        'tend_ledger_entries',
        'tend_workers_online',
        'tend_last_success_timestamp_seconds',
      ]),
    );
  });

  it('runs by routine and outcome (counter), with label values escaped', async () => {
    const m = families((await scrape()).text);
    const runs = family(m, 'tend_runs_total');
    expect(runs.type).toBe('COUNTER');
    expect(value(runs, { routine: OK, kind: 'batch', outcome: 'completed' })).toBe(2);
    expect(value(runs, { routine: BAD, kind: 'batch', outcome: 'error' })).toBe(1);
    expect(value(runs, { routine: WEIRD, kind: 'batch', outcome: 'completed' })).toBe(1);
    expect(sample(runs, { routine: OK, kind: 'batch', outcome: 'error' })).toBeUndefined();
    expect(sample(runs, { routine: IDLE, kind: 'batch', outcome: 'completed' })).toBeUndefined();
  });

  it('run durations (histogram): cumulative buckets, +Inf equals the count, the sum matches the runs', async () => {
    const text = (await scrape()).text;
    expect(family(families(text), 'tend_run_duration_seconds').type).toBe('HISTOGRAM');
    const ok = histogramSeries(text, 'tend_run_duration_seconds', { routine: OK })!;
    expect(Number(ok.count)).toBe(2);
    const weird = histogramSeries(text, 'tend_run_duration_seconds', { routine: WEIRD })!;
    expect(Number(weird.count)).toBe(1);
    expect(histogramSeries(text, 'tend_run_duration_seconds', { routine: IDLE })).toBeUndefined();
    const bounds = Object.keys(ok.buckets!);
    expect(bounds).toEqual(expect.arrayContaining([...RUN_DURATION_BOUNDS.map(String), '+Inf']));
    const counts = [...RUN_DURATION_BOUNDS.map(String), '+Inf'].map((b) => Number(ok.buckets![b]));
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]!);
    expect(counts[counts.length - 1]).toBe(2);
    const ran = engine.store.runs.history(OK, 10).map((r) => (r.endedAt! - r.startedAt!) / 1000);
    expect(Number(ok.sum)).toBeCloseTo(ran.reduce((a, b) => a + b, 0), 3);
    expect(Number(ok.buckets!['0.1'] ?? '0')).toBe(0); // not a bound
    expect(Number(ok.buckets!['1'])).toBe(ran.filter((d) => d <= 1).length);
  });

  it('routines by state, batch jobs by status, ledger size, workers online, last success per routine', async () => {
    const m = families((await scrape()).text);
    const routines = family(m, 'tend_routines');
    expect(routines.type).toBe('GAUGE');
    expect(value(routines, { kind: 'batch', state: 'completed' })).toBe(2);
    expect(value(routines, { kind: 'batch', state: 'error' })).toBe(1);
    expect(value(routines, { kind: 'batch', state: 'paused' })).toBe(1);
    expect(value(routines, { kind: 'realtime', state: 'running' })).toBe(0);
    const jobs = family(m, 'tend_batch_jobs');
    expect(value(jobs, { status: 'completed' })).toBe(1);
    expect(value(jobs, { status: 'pending' })).toBe(0);
    expect(value(family(m, 'tend_ledger_entries'), { backend: 'local' })).toBe(0);
    expect(value(family(m, 'tend_workers'))).toBe(2);
    expect(value(family(m, 'tend_workers_online'))).toBe(1);
    const last = family(m, 'tend_last_success_timestamp_seconds');
    const endedAt = Math.max(...engine.store.runs.history(OK, 10).map((r) => r.endedAt!));
    expect(value(last, { routine: OK })).toBe(endedAt / 1000);
    expect(sample(last, { routine: BAD })).toBeUndefined();
  });

  it('pass duration (histogram) grows with the passes of the serving engine', async () => {
    const before = family(families((await scrape()).text), 'tend_pass_duration_seconds').metrics[0]!;
    expect(Number(before.count)).toBeGreaterThan(0);
    expect(Number(before.buckets!['+Inf'])).toBe(Number(before.count));
    await engine.scheduler.pass().catch(() => undefined);
    await waitFor(async () => Number(family(families((await scrape()).text), 'tend_pass_duration_seconds').metrics[0]!.count) > Number(before.count), 5000, 'another pass to be counted');
    expect(value(family(families((await scrape()).text), 'tend_pass_faults_total'))).toBe(0);
  });

  it('the ledger gauge counts a job in flight', async () => {
    const now = Date.now();
    saveRoutine(engine.store, { id: SLOW, command: 'sleep', args: ['30'], at: '2099-01-01T00:00', tz: 'UTC' }, { now, localComputer: HOST });
    const run = engine.runNow(SLOW);
    try {
      await waitFor(() => engine.store.runs.get(run.id)!.status === 'RUNNING', 15_000, 'slow to run');
      const m = families((await scrape()).text);
      expect(value(family(m, 'tend_ledger_entries'), { backend: 'local' })).toBe(1);
      expect(value(family(m, 'tend_runs_in_progress'), { status: 'running' })).toBe(1);
    } finally {
      await engine.stopRoutine(SLOW);
    }
  });
});

describe('GET /metrics with metricsPublic (TEND_METRICS_PUBLIC=1)', () => {
  let other: ApiServer | null = null;
  let publicEngine: Engine | null = null;
  afterEach(async () => {
    await other?.close();
    other = null;
    await publicEngine?.close();
    if (publicEngine) rmSync(publicEngine.dataDir, { recursive: true, force: true });
    publicEngine = null;
  });

  it('answers without a token; other routes still need one', async () => {
    publicEngine = buildEngine({ dataDir: mkdtempSync(join(tmpdir(), 'tend-metrics-public-')), settings: settings({ metricsPublic: true }) });
    other = await startApi(publicEngine);
    const res = await fetch(`${other.url}/metrics`, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    expect(families(await res.text()).has('tend_runs_total')).toBe(true);
    expect((await fetch(`${other.url}/api/routines`, { signal: AbortSignal.timeout(10_000) })).status).toBe(401);
    expect(other.routes.find((r) => r.url === '/metrics')!.scope).toBe('public');
    expect(api.routes.find((r) => r.url === '/metrics')!.scope).toBe('admin');
  });
});

describe('the exposition writer', () => {
  it('escapes label values and help text, writes +Inf, refuses bad names and a family written twice', () => {
    const x = new Exposition()
      .gauge('g', 'a \\ help\nline', [{ labels: { a: 'x"y\\z\nw' }, value: Infinity }])
      .histogram('h_seconds', 'h', [1, 2], [{ cumulative: [1, 2], sum: 2.5, count: 3 }]);
    const text = x.text();
    expect(text).toContain('# HELP g a \\\\ help\\nline');
    expect(text).toContain('g{a="x\\"y\\\\z\\nw"} +Inf');
    expect(text).toContain('h_seconds_bucket{le="+Inf"} 3');
    const parsed = families(text);
    expect(parsed.get('g')!.metrics[0]!.labels!.a).toBe('x"y\\z\nw');
    expect(parsed.get('h_seconds')!.metrics[0]!.buckets).toEqual({ '1': '1', '2': '2', '+Inf': '3' });
    expect(() => new Exposition().gauge('bad-name', 'x', [])).toThrow(/bad metric name/);
    expect(() => new Exposition().gauge('g', 'x', [{ labels: { 'bad-label': 'v' }, value: 1 }])).toThrow(/bad label name/);
    expect(() => new Exposition().gauge('g', 'x', []).counter('g', 'y', [])).toThrow(/written twice/);
  });

  it('collectMetrics works on a store without pass statistics (another process reading the data dir)', () => {
    const text = collectMetrics(engine.store, Date.now(), null, DEFAULT_SETTINGS.workerOfflineMs);
    assertWellFormed(text);
    const m = families(text);
    expect(family(m, 'tend_pass_duration_seconds').metrics).toEqual([]);
    expect(m.has('tend_last_pass_timestamp_seconds')).toBe(true);
    expect(new PassStats().duration.count).toBe(0);
  });
});
