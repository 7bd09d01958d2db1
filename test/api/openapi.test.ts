// The OpenAPI document is the server's truth: standard validators (swagger-parser, Redocly's
// recommended rules) accept it, and
// every documented GET answers a real daemon process gives — and the error statuses it really
// returns — match the documented media type and response schema (ajv, JSON Schema 2020-12).
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPUTER, startDaemon, type Daemon } from '../e2e/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { apiSandbox } from './harness.js';

type Json = Record<string, any>;

let d: Daemon;
let doc: Json;
/** The document with every $ref resolved, for validating answers. */
let deref: Json;
let worker: { stop(): Promise<void> } | undefined;
const ids: Record<string, string> = {};
const raw = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(d.url + path, { method, headers: { authorization: `Bearer ${d.token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, json: (await res.json()) as Json };
};
const failing = `${COMPUTER}:api/failing`;

beforeAll(async () => {
  d = await startDaemon();
  const fail = d.script('fail.sh', 'echo "to stdout"\necho "boom" >&2\nexit 3');
  await d.api('routines.create', { id: failing, command: fail, in: '1s', retry: 'none', env: { API_TOKEN: 'secret' } });
  await d.api('routines.create', { id: `${COMPUTER}:api/daily`, command: 'true', cron: '0 6 * * *' });
  await d.api('routines.create', { id: `${COMPUTER}:api/external`, command: 'true', external: true, cron: '0 7 * * *' });
  worker = await d.worker('bob@render-farm', 2);
  const job = await d.api('jobs.post', { name: 'one', command: 'true' });
  ids.job = String(job.id);
  const hook = await raw('POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['error'] });
  ids.webhook = String(hook.json.value.id);
  await waitFor(async () => (await d.api('routines.show', { id: failing })).today === 'ERROR', 30_000, 'the failing routine to end in ERROR', 100);
  await waitFor(async () => (await d.api('jobs.show', { id: job.id })).status === 'COMPLETED', 30_000, 'the job to complete', 100);
  await waitFor(async () => (await d.api('workers.list', {})).some((w) => w.computer === 'bob@render-farm' && w.lastSeen !== null), 30_000, 'the worker to be seen', 100);
  ids.run = (await d.api('routines.show', { id: failing })).history[0]!.id;
  const res = await raw('GET', '/api/openapi.json');
  doc = res.json;
  deref = (await SwaggerParser.dereference(structuredClone(doc) as never)) as Json;
}, 90_000);
afterAll(async () => {
  await worker?.stop();
  await d?.stop();
});

const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
function check(schema: Json, value: unknown, what: string): void {
  const validate = ajv.compile(schema);
  if (!validate(value)) throw new Error(`${what}: ${ajv.errorsText(validate.errors, { separator: '\n  ' })}\n${JSON.stringify(value).slice(0, 600)}`);
}

/** The documented answer of `method path` for `status` and its media type. */
function documented(method: string, path: string, status: number): { type: string; schema: Json } | { type: null } {
  const op = deref.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not documented`);
  const r = op.responses[String(status)];
  if (!r) throw new Error(`${method} ${path} answered ${status}, which the document does not list (it lists ${Object.keys(op.responses).join(', ')})`);
  if (!r.content) return { type: null };
  const [type, media] = Object.entries(r.content as Record<string, { schema: Json }>)[0]!;
  return { type, schema: media.schema };
}

/**
 * A POST that declares a body over the limit and sends none of it until answered. The server
 * refuses on the declared length and closes the connection; a client still uploading could meet
 * EPIPE instead of the answer, so this one waits for the answer first.
 */
function oversized(concrete: string, bytes: number): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(d.url + concrete, { method: 'POST', headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json', 'content-length': bytes } });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        req.destroy();
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers }));
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

/** Send (or take the answer given), then hold it against the document: status listed, media type and body as described. */
async function conforms(method: string, path: string, concrete: string, init: RequestInit & { token?: string | null; answer?: Response } = {}): Promise<number> {
  const headers = new Headers(init.headers);
  if (init.token !== null) headers.set('authorization', `Bearer ${init.token ?? d.token}`);
  const ctl = new AbortController();
  const res = init.answer ?? (await fetch(d.url + concrete, { ...init, headers, signal: ctl.signal }));
  const want = documented(method, path, res.status);
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (want.type === null) {
    expect(await res.text(), `${method} ${concrete} ${res.status}: documented without a body`).toBe('');
    return res.status;
  }
  expect(type, `${method} ${concrete} ${res.status}: media type`).toBe(want.type);
  if (type === 'text/event-stream') {
    ctl.abort(); // a stream: its headers are the answer
    return res.status;
  }
  const text = await res.text();
  if (type === 'application/json') check(want.schema, JSON.parse(text), `${method} ${concrete} ${res.status}`);
  else check(want.schema, text, `${method} ${concrete} ${res.status}`);
  return res.status;
}

/** A concrete URL for each documented path: real ids, and the query a worker route needs. */
function fill(path: string): string {
  const byPath: Record<string, string> = {
    '/api/routines/{id}': `/api/routines/${encodeURIComponent(failing)}`,
    '/api/jobs/{id}': `/api/jobs/${ids.job}`,
    '/api/runs/{id}': `/api/runs/${ids.run}`,
    '/api/runs/{id}/log': `/api/runs/${ids.run}/log?stream=stderr`,
    '/api/runs/{id}/log/follow': `/api/runs/${ids.run}/log/follow`,
    '/api/worker/commands': `/api/worker/commands?computer=bob%40render-farm`,
    '/api/runs': '/api/runs',
    '/api/events/recent': '/api/events/recent?limit=50',
  };
  const out = byPath[path] ?? path;
  if (/\{\w+\}/.test(out)) throw new Error(`no concrete URL for ${path}: add one`);
  return out;
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 to a standard validator, with a license and no x-query extension', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(JSON.stringify(doc)).not.toContain('x-query');
    // Every response schema compiles (JSON Schema 2020-12).
    for (const [path, ops] of Object.entries(deref.paths as Json)) {
      for (const [method, op] of Object.entries(ops as Json)) {
        expect(op.responses['200'], `${method} ${path}`).toBeDefined();
        for (const [status, r] of Object.entries(op.responses as Json)) for (const m of Object.values((r as Json).content ?? {})) expect(() => ajv.compile((m as Json).schema), `${method} ${path} ${status}`).not.toThrow();
      }
    }
  });

  it('passes Redocly’s recommended rules with no error or warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`)).toEqual([]);
  });

  it('documents the query of GET routes as query parameters and no body on routes that take only their path id', () => {
    const op = (method: string, path: string) => doc.paths[path][method];
    const names = (o: Json) => o.parameters.map((p: Json) => `${p.in}:${p.name}`);
    expect(names(op('get', '/api/jobs'))).toEqual(['query:status', 'query:limit']);
    expect(names(op('get', '/api/runs/{id}/log'))).toEqual(['path:id', 'query:stream', 'query:tailBytes']);
    expect(names(op('get', '/api/events'))).toEqual(['query:after']);
    for (const path of ['/api/routines/{id}/pause', '/api/routines/{id}/run', '/api/routines/{id}/stop', '/api/jobs/{id}/cancel']) {
      expect(op('post', path).requestBody, path).toBeUndefined();
      expect(names(op('post', path)), path).toEqual(['path:id']);
    }
    expect(op('delete', '/api/routines/{id}').requestBody).toBeUndefined();
    expect(Object.keys(op('post', '/api/schedules/{name}/mode').requestBody.content['application/json'].schema.properties)).toEqual(['mode']);
    expect(op('post', '/api/routines').requestBody.required).toBe(true);
  });

  it('describes the plugin routes (worker pool, external reports, webhooks, metrics) and the real media types', () => {
    const plugins: [string, string][] = [
      ['get', '/api/worker/commands'],
      ['post', '/api/worker/jobs/claim'],
      ['post', '/api/worker/reports'],
      ['post', '/api/external/{id}/{action}'],
      ['get', '/api/webhooks'],
      ['post', '/api/webhooks'],
      ['delete', '/api/webhooks/{id}'],
      ['get', '/api/webhooks/deliveries'],
    ];
    for (const [method, path] of plugins) {
      const op = doc.paths[path][method];
      expect(op.summary, `${method} ${path}`).not.toMatch(/^(GET|POST|DELETE) /);
      expect(op.responses['200'].content['application/json'].schema.properties.value, `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths['/api/worker/jobs/claim'].post.requestBody.content['application/json'].schema.required).toContain('slots');
    expect(Object.keys(doc.paths['/metrics'].get.responses['200'].content)).toEqual(['text/plain']);
    expect(Object.keys(doc.paths['/api/events'].get.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(doc.paths['/api/runs/{id}/log/follow'].get.responses['200'].content)).toEqual(['text/event-stream']);
    expect(Object.keys(doc.paths['/api/openapi.json'].get.responses['200'].content)).toEqual(['application/json']);
  });

  it('every documented GET answers a real daemon as documented', async () => {
    const gets = Object.entries(doc.paths as Json).filter(([, ops]) => (ops as Json).get).map(([path]) => path);
    expect(gets.length).toBeGreaterThan(15);
    for (const path of gets) expect(await conforms('GET', path, fill(path)), path).toBe(200);
  });

  it('the write routes answer as documented too (contract and plugin routes)', async () => {
    const json = (method: string, body?: unknown): RequestInit => ({ method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const extra = `${COMPUTER}:api/extra`;
    const id = encodeURIComponent(extra);
    const ext = encodeURIComponent(`${COMPUTER}:api/external`);
    const writes: [string, string, string, RequestInit][] = [
      ['POST', '/api/timing/preview', '/api/timing/preview', json('POST', { timing: { cron: '0 6 * * *' }, count: 2 })],
      ['POST', '/api/routines', '/api/routines', json('POST', { id: extra, command: 'true', cron: '0 5 * * *', env: { DB_PASSWORD: 'hunter2' } })],
      ['PUT', '/api/routines/{id}', `/api/routines/${id}`, json('PUT', { changes: { cron: '0 4 * * *' } })],
      ['POST', '/api/routines/{id}/pause', `/api/routines/${id}/pause`, { method: 'POST' }],
      ['POST', '/api/routines/{id}/resume', `/api/routines/${id}/resume`, { method: 'POST' }],
      ['POST', '/api/routines/{id}/clear', `/api/routines/${id}/clear`, { method: 'POST' }],
      ['POST', '/api/routines/{id}/run', `/api/routines/${id}/run`, { method: 'POST' }],
      ['POST', '/api/routines/{id}/stop', `/api/routines/${id}/stop`, { method: 'POST' }],
      ['POST', '/api/routines/{id}/restart', `/api/routines/${id}/restart`, { method: 'POST' }],
      ['POST', '/api/schedules/{name}/mode', '/api/schedules/default/mode', json('POST', { mode: 'active' })],
      ['POST', '/api/jobs', '/api/jobs', json('POST', { name: 'later', command: 'true', computer: 'nobody@nowhere', after: [Number(ids.job)] })],
      ['POST', '/api/external/{id}/{action}', `/api/external/${ext}/start`, json('POST', { runId: 'doc-1' })],
      ['POST', '/api/external/{id}/{action}', `/api/external/${ext}/complete`, json('POST', { runId: 'doc-1', exitCode: 0 })],
      ['POST', '/api/worker/reports', '/api/worker/reports', json('POST', { computer: 'dave@lab', reports: [] })],
      ['POST', '/api/worker/jobs/claim', '/api/worker/jobs/claim', json('POST', { computer: 'dave@lab', slots: 1 })],
      ['POST', '/api/webhooks', '/api/webhooks', json('POST', { url: 'http://127.0.0.1:9/other', routine: extra })],
    ];
    for (const [method, path, concrete, init] of writes) expect(await conforms(method, path, concrete, init), `${method} ${concrete}`).toBe(200);
    const job = (await raw('GET', '/api/jobs')).json.value.find((j: Json) => j.name === 'later');
    expect(await conforms('POST', '/api/jobs/{id}/cancel', `/api/jobs/${job.id}/cancel`, { method: 'POST' })).toBe(200);
    const hook = (await raw('GET', '/api/webhooks')).json.value.find((h: Json) => h.routineId === extra);
    expect(await conforms('DELETE', '/api/webhooks/{id}', `/api/webhooks/${hook.id}`, { method: 'DELETE' })).toBe(200);
    expect(await conforms('POST', '/api/workers/{computer}/forget', '/api/workers/dave%40lab/forget', json('POST', { force: true }))).toBe(200);
    await waitFor(async () => !(await d.api('routines.show', { id: extra })).lastRun || ['COMPLETED', 'ERROR', 'CANCELLED'].includes((await d.api('routines.show', { id: extra })).lastRun!.status), 30_000, 'the extra run to end', 100);
    expect(await conforms('DELETE', '/api/routines/{id}', `/api/routines/${id}`, { method: 'DELETE' })).toBe(200);
  });

  it('the error answers the server really gives are documented, each in the error envelope', async () => {
    const id = encodeURIComponent(failing);
    expect(await conforms('GET', '/api/routines/{id}', '/api/routines/nobody%40nowhere%3Anothing')).toBe(404);
    expect(await conforms('GET', '/api/routines', '/api/routines', { token: null })).toBe(401);
    expect(await conforms('GET', '/api/jobs', '/api/jobs?limit=0')).toBe(400);
    expect(await conforms('POST', '/api/routines', '/api/routines', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: failing, command: 'true', cron: '0 1 * * *' }) })).toBe(409);
    expect(await conforms('POST', '/api/routines/{id}/run', `/api/routines/${encodeURIComponent(`${COMPUTER}:api/external`)}/run`, { method: 'POST' })).toBe(409);
    expect(await conforms('PUT', '/api/routines/{id}', `/api/routines/${id}`, { method: 'PUT', headers: { 'content-type': 'application/xml' }, body: '<a/>' })).toBe(415);
    expect(await conforms('POST', '/api/jobs', '/api/jobs', { answer: await oversized('/api/jobs', 2 * 1024 * 1024) })).toBe(413);
    expect(await conforms('GET', '/api/daemon/status', '/api/daemon/status', { headers: { 'x-filler': 'x'.repeat(20_000) } })).toBe(431);
    const issued = await d.cli(['worker', 'token', 'carol@lab']);
    expect(await conforms('GET', '/api/routines', '/api/routines', { token: issued.stdout.trim() })).toBe(403);
  });

  it('a request that reaches a stopping server answers 503 as documented', async () => {
    // Fastify sheds requests that arrive on a connection still busy once closing has begun: hold
    // one open by sending its body in two parts, close, then finish it and pipeline a second.
    const api = await apiSandbox();
    let closed: Promise<void> | null = null;
    try {
      const u = new URL(api.url);
      const sock = connect(Number(u.port), u.hostname);
      let got = '';
      sock.on('data', (b: Buffer) => (got += b.toString()));
      await new Promise((r) => sock.once('connect', r));
      const body = JSON.stringify({ timing: { cron: '0 6 * * *' } });
      const received = new Promise((r) => api.server.app.server.once('request', r));
      sock.write(`POST /api/timing/preview HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
      await received;
      closed = api.server.close();
      await waitFor(() => api.engine.wake.closed, 10_000, 'the server to begin closing');
      sock.write(`${body.slice(5)}GET /api/daemon/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.token}\r\n\r\n`);
      const second = await waitFor(() => /HTTP\/1\.1 503[^]*?\r\n\r\n(\{.*\})$/.exec(got), 10_000, 'the 503');
      sock.end();
      await closed;
      const want = documented('GET', '/api/daemon/status', 503);
      expect(want.type).toBe('application/json');
      if (want.type) check(want.schema, JSON.parse(second[1]!), 'GET /api/daemon/status 503');
    } finally {
      await (closed ?? api.server.close());
      await api.engine.close();
      rmSync(api.dir, { recursive: true, force: true });
    }
  });
});
