// Property: no malformed request makes the daemon answer 5xx, exit, or store anything. Thousands of
// requests from a seeded generator go to every route the router holds — malformed JSON, wrong
// types, unknown fields, non-objects, bodies over the limit, wrong content types, weird ids and
// query strings, unicode, deep nesting — against a real `tend daemon run` child process. Every
// request carries at least one defect that makes it invalid, so the database must not change at all.
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApi } from '../../main/engine/api/server.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import { killTracked, scratch, tendOk } from '../helpers/cli.js';
import { Daemon, stopOwner } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';

const SEED = Number(process.env.TEND_FUZZ_SEED ?? 20_260_105);
const CASES = 3000;
const BUDGET_MS = 45_000;
const CONCURRENCY = 12;
const BODY_LIMIT = 1024 * 1024;

/** mulberry32: small, seeded, good enough to pick junk. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof rng>;

const UNICODE = ['ü', '✓', '𝔘', '\u202e', '\u0000', '\ud800', '🙂', '日本', '\u200b', 'Ω', '\\', '"', "'", '%', '/', '..', '\n', '\t', '<script>'];
const FIELDS = [
  'id', 'name', 'schedule', 'computer', 'realtime', 'external', 'command', 'args', 'cwd', 'env', 'runtimes', 'cron', 'every', 'at', 'in', 'tz', 'after',
  'retry', 'misfire', 'overlap', 'timeout', 'heartbeat', 'grace', 'tolerance', 'logCap', 'outputs', 'revision', 'changes', 'timing', 'count', 'mode',
  'status', 'limit', 'day', 'stream', 'tailBytes', 'slots', 'wait', 'reports', 'kind', 'state', 'runId', 'exitCode', 'message', 'version', 'running',
];

function junkString(r: Rng): string {
  const n = r.pick([0, 1, 2, 5, 20, 300, 70_000]);
  let s = '';
  while (s.length < n) s += r.chance(0.5) ? r.pick(UNICODE) : String.fromCharCode(32 + r.int(95));
  return s.slice(0, Math.max(n, 0));
}

function junkValue(r: Rng, depth = 0): unknown {
  switch (r.int(depth > 3 ? 7 : 10)) {
    case 0: return junkString(r);
    case 1: return r.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, 42]);
    case 2: return r.chance(0.5);
    case 3: return null;
    case 4: return r.pick(['', '0s', '-5m', '99 * * * *', '* * *', '25:61', '2099-13-45', 'Mars/Base', 'NaN', 'Infinity', 'observe ', 'ACTIVE', 'me@box', '@:', 'a@b:']);
    case 5: return r.pick([[], [''], [1, 2], ['a', 1], [null]]);
    case 6: return {};
    case 7: return Array.from({ length: r.int(4) }, () => junkValue(r, depth + 1));
    case 8: return Object.fromEntries(Array.from({ length: r.int(4) }, () => [r.chance(0.5) ? r.pick(FIELDS) : junkString(r).slice(0, 20), junkValue(r, depth + 1)]));
    default: {
      // Deep nesting.
      let v: unknown = 'bottom';
      for (let i = 0; i < 50 + r.int(200); i++) v = r.chance(0.5) ? [v] : { a: v };
      return v;
    }
  }
}

/** Never valid for any field: not a string, number, boolean, plain record or flat list. */
const POISON = [[[{ '\u202e': ['nested'] }]]];

function weirdId(r: Rng): string {
  return r.pick([
    () => junkString(r).slice(0, 200),
    () => `ghost@box:${junkString(r).slice(0, 40) || 'x'}`,
    () => r.pick(['-1', '0', '1e5', '0x10', '99999999999999999999999', '1.5', 'NaN', ' 1', '%00', '%zz', '%', '..%2F..%2Fetc%2Fpasswd', '%E2%80%AE', 'a'.repeat(3000), `${'z'.repeat(150)}%ED%A0%80`, '%ED%A0%80']),
    () => String(100_000 + r.int(1_000_000)),
  ])();
}

/** encodeURIComponent, with lone surrogates sent as their (invalid) UTF-8 bytes instead of throwing. */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .split(/([\ud800-\udfff])/)
      .map((part) => (/^[\ud800-\udfff]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
      .join('');
  }
}

function encodeSegment(r: Rng, s: string): string {
  // Sometimes raw (malformed escapes reach the router), mostly encoded.
  if (/^%|%zz|%2F|%ED%A0%80/.test(s) && r.chance(0.5)) return s;
  return enc(s);
}

function junkQuery(r: Rng, poison: boolean): string {
  const parts: string[] = [];
  const n = r.int(4);
  for (let i = 0; i < n; i++) {
    const k = r.chance(0.7) ? r.pick(FIELDS) : r.pick(['__proto__[polluted]', 'constructor[prototype][x]', 'a[]', 'limit', 'limit']);
    const v = junkValue(r);
    parts.push(`${enc(k)}=${enc(typeof v === 'string' ? v.slice(0, 500) : (JSON.stringify(v)?.slice(0, 500) ?? ''))}`);
  }
  if (poison) parts.push(`zz_unknown_${r.int(1000)}=${enc(r.pick(UNICODE))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

interface Case {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  kind: string;
}

const MALFORMED_JSON = ['{', '{"a":', '[1,2', 'nul', '{"id": undefined}', "{'id': 1}", '{"a":1,}', '\u0000', '{"__proto__": {"polluted": true}}', '{"constructor": {"prototype": {"polluted": true}}}', '{"a":"\\ud800"', '0x10', '--', '{"a":1}{"b":2}', '\ufeff{"a":1'];

/** Ids that exist (seeded): requests naming them must still change nothing, their defect elsewhere. */
const existing: string[] = [];

function makeCase(r: Rng, route: { method: string; url: string; scope: string }, tokens: { admin: string; worker: string }): Case {
  const pathParams = route.url.includes(':');
  const headers: Record<string, string> = {};
  const who = r.next();
  if (who < 0.85) headers.authorization = `Bearer ${tokens.admin}`;
  else if (who < 0.93) headers.authorization = `Bearer ${tokens.worker}`;
  else if (who < 0.97) headers.authorization = `Bearer ${junkString(r).replace(/[^\x21-\x7e]/g, 'x').slice(0, 100) || 'x'}`;
  const hasBody = route.method === 'POST' || route.method === 'PUT';
  // What makes this request invalid (there is always at least one defect).
  const defects = hasBody ? ['json', 'nonobject', 'unknown-field', 'poison-field', 'oversize', 'content-type'] : ['query', ...(pathParams ? ['id'] : [])];
  const kind = r.pick(defects);
  // A real id only where the defect is refused before anything is looked up (never `poison-field`:
  // a poisoned `id` in the body would be overridden by the path's).
  const real = pathParams && kind !== 'id' && kind !== 'poison-field' && r.chance(0.3);
  let path = route.url.replace(/:(\w+)/g, (_, name: string) =>
    real ? enc(name === 'action' ? r.pick(['start', 'heartbeat', 'complete', 'fail', 'log']) : name === 'name' ? 'default' : r.pick(existing)) : encodeSegment(r, kind === 'id' || r.chance(0.7) ? weirdId(r) : `ghost@box:${r.int(1e6)}`),
  );
  // Path params that are always weird for a body request too: nothing addressed can exist.
  path += junkQuery(r, kind === 'query' || (!hasBody && kind !== 'id'));
  if (!hasBody) return { method: route.method, path, headers, kind: real ? `${kind}+real-id` : kind };
  headers['content-type'] = 'application/json';
  let body: string | Buffer;
  const obj = (): Record<string, unknown> => Object.fromEntries(Array.from({ length: r.int(6) }, () => [r.pick(FIELDS), junkValue(r)]));
  switch (kind) {
    case 'json':
      body = r.pick(MALFORMED_JSON);
      break;
    case 'nonobject':
      body = JSON.stringify(r.pick([1, 'str', [], [{}], null, true, -1.5, ['id', 'command']]));
      break;
    case 'unknown-field':
      body = JSON.stringify({ ...obj(), [`zz_${junkString(r).slice(0, 10)}_${r.int(1e6)}`]: junkValue(r) });
      break;
    case 'poison-field':
      body = JSON.stringify({ ...obj(), [r.pick(FIELDS)]: POISON });
      break;
    case 'oversize':
      body = Buffer.alloc(BODY_LIMIT + 1 + r.int(1000), 0x20);
      body.write('{"command":"', 0);
      break;
    default: // content-type; the body is refused even if some parser took it
      headers['content-type'] = r.pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=utf-16', 'image/png', '']);
      body = r.chance(0.5) ? 'id=me@box:x&command=true&every=5m&zz_unknown=1' : JSON.stringify({ id: 'me@box:x', command: 'true', every: '5m', zz_unknown: 1 });
  }
  return { method: route.method, path, headers, body, kind: real ? `${kind}+real-id` : kind };
}

// ---------------------------------------------------------------------------------------------

const SKIP_TABLES = new Set<string>();

function snapshot(dir: string): Record<string, unknown[]> {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) if (!SKIP_TABLES.has(name)) out[name] = db.prepare(`SELECT * FROM "${name}" ORDER BY 1`).all();
    return out;
  } finally {
    db.close();
  }
}

let box: ReturnType<typeof scratch>;
let daemon: Daemon;
let routes: { method: string; url: string; scope: string }[];
let api: { url: string; token: string };
let workerToken: string;

beforeAll(async () => {
  // The route list, from the router itself (an in-process server on a scratch dir).
  const probe = scratch('tend-fuzz-probe-');
  const engine = buildEngine({ dataDir: probe.dir });
  const server = await startApi(engine);
  routes = server.routes.filter((r) => !r.url.includes('*'));
  await server.close();
  await engine.close();
  probe.remove();

  box = scratch('tend-fuzz-');
  const dir = box.dir;
  // Something to protect: routines (one depending on another), a finished job, a worker.
  tendOk(dir, ['routine', 'add', 'fuzz/a', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'true']);
  tendOk(dir, ['routine', 'add', 'fuzz/b', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--after', 'fuzz/a', '--env', 'API_KEY=hush', '--', 'echo', 'b']);
  workerToken = tendOk<{ token: string }>(dir, ['worker', 'token', 'me@fuzzworker', '--json']).token;
  daemon = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '200' }, ['--quiet']).ready();
  tendOk(dir, ['job', 'post', '--json', '--', 'true']);
  tendOk(dir, ['routine', 'run', 'fuzz/a']);
  api = JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')) as { url: string; token: string };
  const get = async (path: string) => ((await (await fetch(api.url + path, { headers: { authorization: `Bearer ${api.token}` } })).json()) as { value: { id: string | number }[] }).value;
  for (const x of [...(await get('/api/routines')), ...(await get('/api/runs')), ...(await get('/api/jobs'))]) existing.push(String(x.id));
  expect(existing).toHaveLength(4);
  await waitFor(async () => {
    const r = await fetch(`${api.url}/api/jobs`, { headers: { authorization: `Bearer ${api.token}` } });
    return ((await r.json()) as { value: { status: string }[] }).value.every((j) => j.status === 'COMPLETED');
  }, 20_000, 'the seed job to complete');
}, 90_000);

afterAll(async () => {
  await stopOwner(box.dir);
  await killTracked();
  box.remove();
});

it('the daemon serves the same routes the router enumerates', async () => {
  const doc = (await (await fetch(`${api.url}/api/openapi.json`, { headers: { authorization: `Bearer ${api.token}` } })).json()) as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`));
  expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.url}`).sort());
  expect(routes.length).toBeGreaterThan(25);
});

it(`${CASES} malformed requests to every route: never 5xx, the daemon stays up, the database is unchanged`, async () => {
  // Passes of an idle daemon must not touch these tables either: settle first.
  await waitFor(() => JSON.stringify(snapshot(box.dir)) === JSON.stringify(snapshot(box.dir)), 5000, 'a quiet database');
  const before = snapshot(box.dir);
  const r = rng(SEED);
  const statuses = new Map<number, number>();
  const kinds = new Map<string, number>();
  const bad: string[] = [];
  const started = Date.now();
  let sent = 0;

  const one = async (c: Case) => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 15_000);
    try {
      const res = await fetch(api.url + c.path, { method: c.method, headers: c.headers, body: c.body, signal: ctl.signal });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) bad.push(`${res.status} ${c.method} ${c.path.slice(0, 200)} [${c.kind}] ${String(c.body ?? '').slice(0, 200)} → ${(await res.text()).slice(0, 300)}`);
      else if (res.headers.get('content-type')?.startsWith('text/event-stream')) ctl.abort();
      else await res.arrayBuffer();
    } catch (err) {
      // An oversized body may be refused by closing the connection while the client is still
      // sending it (the 413 races the upload): a refusal too, as long as the daemon stays up (checked below).
      if (c.kind.startsWith('oversize') && !ctl.signal.aborted) statuses.set(0, (statuses.get(0) ?? 0) + 1);
      else if (!ctl.signal.aborted) bad.push(`no answer: ${c.method} ${c.path.slice(0, 200)} [${c.kind}]: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  };

  while (sent < CASES && Date.now() - started < BUDGET_MS) {
    const batch: Promise<void>[] = [];
    for (let i = 0; i < CONCURRENCY && sent < CASES; i++, sent++) {
      const c = makeCase(r, routes[sent % routes.length]!, { admin: api.token, worker: workerToken });
      kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
      batch.push(one(c));
    }
    await Promise.all(batch);
    if (daemon.exit) break;
  }

  const summary = `seed ${SEED}: ${sent} requests in ${Date.now() - started} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}; defects ${JSON.stringify(Object.fromEntries(kinds))}`;
  console.log(summary);
  expect(bad, summary).toEqual([]);
  expect(daemon.exit, daemon.stderr).toBeNull();
  expect(sent).toBeGreaterThanOrEqual(1000);
  // The generator reached the interesting refusals.
  for (const s of [400, 401, 403, 404, 413, 415]) expect(statuses.get(s) ?? 0, `${s} in ${summary}`).toBeGreaterThan(0);

  const health = await fetch(`${api.url}/health`);
  expect(health.status).toBe(200);
  expect(((await health.json()) as { value: { pid: number } }).value.pid).toBe(daemon.pid);
  // And it still does its work: a pass after the storm.
  const beat = Date.now();
  await waitFor(() => Date.parse((JSON.parse(readFileSync(join(box.dir, 'daemon.state.json'), 'utf8')) as { lastHeartbeat: string }).lastHeartbeat) > beat, 10_000, 'a pass after the fuzz');
  expect(snapshot(box.dir)).toEqual(before);
}, 120_000);
