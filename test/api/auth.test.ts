// Every route the router holds (enumerated from fastify's onRoute hook, so a new route cannot
// skip the check): no token → 401, a wrong token → 401, a worker token → 403 unless the route is
// the worker's, the admin token → 200 on every list route. api.json: mode 600, url and token.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueWorkerToken, sameSecret } from '../../main/engine/api/auth.js';
import { ROUTES, EXTRA_ROUTES } from '../../contract/routes.js';
import { apiSandbox, concrete, sse, STREAMING, type ApiSandbox } from './harness.js';

let api: ApiSandbox;
let workerToken: string;

beforeAll(async () => {
  api = await apiSandbox({ renderer: true });
  workerToken = issueWorkerToken(api.engine.store, 'me@worker1', Date.now());
});
afterAll(() => api.close());

const nonPublic = () => api.server.routes.filter((r) => r.scope !== 'public');

describe('the route list comes from the router', () => {
  it('holds every contract route, the extra routes, the worker routes and the static route', () => {
    const got = api.server.routes.map((r) => `${r.method} ${r.url}`);
    for (const spec of [...Object.values(ROUTES), ...Object.values(EXTRA_ROUTES)]) expect(got).toContain(`${spec.method} ${spec.path}`);
    expect(got).toContain('GET /*');
    expect(new Set(got).size).toBe(got.length);
    // The worker's routes are the only ones a worker token reaches.
    expect(api.server.routes.filter((r) => r.scope === 'worker').map((r) => r.url)).toEqual(expect.arrayContaining(['/api/worker/commands']));
    for (const r of api.server.routes.filter((x) => x.scope === 'worker')) expect(r.url).toMatch(/^\/api\/(worker|external)\//);
    // Only the health check and the page itself (which carries no secret) are public.
    expect(api.server.routes.filter((r) => r.scope === 'public').map((r) => r.url).sort()).toEqual(['/*', '/health']);
  });

  it('the OpenAPI document covers every route but the page', async () => {
    const doc = await api.admin('GET', '/api/openapi.json');
    const documented = Object.entries(doc.json.paths as Record<string, object>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`));
    expect(documented.sort()).toEqual(api.server.routes.filter((r) => r.url !== '/*').map((r) => `${r.method} ${r.url}`).sort());
  });
});

describe('without a token', () => {
  it('every non-public route answers 401 (and HEAD of every GET route too)', async () => {
    const failures: string[] = [];
    for (const r of nonPublic()) {
      const path = concrete(r.url);
      const body = r.method === 'GET' || r.method === 'DELETE' ? undefined : { id: 'me@box:x', command: 'true', every: '1m' };
      const res = await api.call(r.method, path, { body });
      if (res.status !== 401 || res.json?.error?.code !== 'UNAUTHORIZED') failures.push(`${r.method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
      if (r.method === 'GET') {
        const head = await api.call('HEAD', path);
        if (head.status !== 401) failures.push(`HEAD ${path}: ${head.status}`);
      }
    }
    expect(failures).toEqual([]);
    expect(nonPublic().length).toBeGreaterThan(25);
  });

  it('a wrong token, a malformed header or another scheme is 401 too', async () => {
    for (const authorization of [`Bearer ${api.token}x`, `Bearer w_${api.token}`, 'Bearer', `Basic ${api.token}`, `Bearer ${api.token} extra`, `bearer  ${api.token.slice(1)}`, '']) {
      for (const r of nonPublic()) {
        const res = await api.call(r.method, concrete(r.url), { headers: { authorization } });
        expect(res.status, `${r.method} ${r.url} with "${authorization.slice(0, 12)}…"`).toBe(401);
      }
    }
  });

  it('the public routes answer without one', async () => {
    const health = await api.call('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ ok: true, value: { status: 'ok', pid: process.pid } });
    const page = await api.call('GET', '/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Tend</title>');
    // The page never embeds the token.
    expect(page.text).not.toContain(api.token);
  });
});

describe('with a worker token', () => {
  it('every route outside the worker scope is 403; nothing else leaks', async () => {
    const failures: string[] = [];
    for (const r of nonPublic()) {
      const path = concrete(r.url);
      const res = await api.call(r.method, path, { token: workerToken });
      if (r.scope === 'worker') {
        if (res.status === 401 || res.status === 403) failures.push(`${r.method} ${path} (worker scope): ${res.status}`);
      } else if (res.status !== 403 || res.json?.error?.code !== 'FORBIDDEN') failures.push(`${r.method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });

  it("a worker token fetches only its own computer's commands, and names it", async () => {
    const unnamed = await api.call('GET', '/api/worker/commands', { token: workerToken });
    expect(unnamed.status).toBe(400);
    expect(unnamed.json.error.message).toMatch(/^computer: required/);
    const named = await api.call('GET', '/api/worker/commands?computer=me@worker1', { token: workerToken });
    expect(named.status).toBe(200);
    expect(named.json.value.commands).toEqual([]);
    const other = await api.call('GET', '/api/worker/commands?computer=me@someone-else', { token: workerToken });
    expect(other.status).toBeGreaterThanOrEqual(400);
    expect(other.status).toBeLessThan(500);
    expect(other.json).toMatchObject({ ok: false, error: { message: expect.stringContaining('belongs to me@worker1') } });
  });

  it('naming another computer is 403 on every worker route, whatever else the request holds', async () => {
    const failures: string[] = [];
    const worker = nonPublic().filter((r) => r.scope === 'worker');
    expect(worker.length).toBeGreaterThanOrEqual(4);
    for (const r of worker) {
      const path = concrete(r.url);
      const res = r.method === 'GET'
        ? await api.call(r.method, `${path}?computer=me@someone-else`, { token: workerToken })
        : await api.call(r.method, path, { token: workerToken, body: { computer: 'me@someone-else' } });
      if (res.status !== 403 || !String(res.json?.error?.message).includes('this token belongs to me@worker1, not me@someone-else')) failures.push(`${r.method} ${path}: ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
  });

  it('a replaced worker token stops working at once', async () => {
    const old = issueWorkerToken(api.engine.store, 'me@worker2', Date.now());
    expect((await api.call('GET', '/api/routines', { token: old })).status).toBe(403);
    issueWorkerToken(api.engine.store, 'me@worker2', Date.now());
    expect((await api.call('GET', '/api/routines', { token: old })).status).toBe(401);
  });
});

describe('the page route does not swallow the API', () => {
  it('an API path no API route matches (a parameter past the router limit) is a JSON 404, not the page; bad escapes are 400', async () => {
    const long = await api.admin('GET', `/api/jobs/${'x'.repeat(150)}`);
    expect(long.status).toBe(404);
    expect(long.json).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    const broken = await api.admin('GET', `/api/routines/${'x'.repeat(150)}%ED%A0%80`);
    expect(broken.status).toBe(400);
    expect(broken.json.ok).toBe(false);
    const page = await api.call('GET', `/${'y'.repeat(150)}%ED%A0%80`);
    expect(page.status).toBe(400);
    // Still nothing without a token: the static route is public, the API behind it is not.
    expect((await api.call('GET', `/api/jobs/${'x'.repeat(150)}`)).json?.value).toBeUndefined();
  });
});

describe('with the admin token', () => {
  it('a GET of every list route (no parameters) answers 200 with {ok: true}', async () => {
    const lists = api.server.routes.filter((r) => r.method === 'GET' && !r.url.includes(':') && !r.url.includes('*') && r.scope !== 'public');
    expect(lists.map((r) => r.url)).toEqual(expect.arrayContaining(['/api/routines', '/api/schedules', '/api/jobs', '/api/runs', '/api/workers', '/api/daemon/status', '/api/daemon/doctor', '/api/events/recent', '/api/events', '/api/openapi.json']));
    for (const r of lists) {
      if (STREAMING.has(r.url)) {
        const s = await sse(api.url, r.url, api.token);
        expect(s.status, r.url).toBe(200);
        expect(s.contentType).toBe('text/event-stream');
        s.close();
        await s.done;
        continue;
      }
      // An admin polling the worker routes names the computer it acts for.
      const res = await api.admin('GET', r.scope === 'worker' ? `${r.url}?computer=me@worker1` : r.url);
      expect(res.status, `${r.url}: ${res.text.slice(0, 200)}`).toBe(200);
      // Contract routes answer {ok: true, value}; documents (OpenAPI, metrics) are what they are.
      if (r.url.startsWith('/api/') && r.url !== '/api/openapi.json') expect(res.json?.ok, r.url).toBe(true);
    }
  });
});

describe('api.json', () => {
  it('is mode 600 and holds the url and token the server answers with', async () => {
    const file = join(api.dir, 'api.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const content = JSON.parse(readFileSync(file, 'utf8'));
    expect(content).toMatchObject({ url: api.url, token: api.token, pid: process.pid });
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(api.token.length).toBeGreaterThanOrEqual(40);
    expect((await api.call('GET', '/api/routines', { token: content.token })).status).toBe(200);
  });
});

describe('token comparison', () => {
  it('is by constant-time compare of equal-length digests: equal, different, and of another length', () => {
    expect(sameSecret(api.token, api.token)).toBe(true);
    expect(sameSecret(api.token, `${api.token.slice(0, -1)}x`)).toBe(false);
    expect(sameSecret(api.token, api.token.slice(0, 5))).toBe(false);
    expect(sameSecret('', api.token)).toBe(false);
  });
});
