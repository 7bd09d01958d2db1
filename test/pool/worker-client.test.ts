// The worker's client of the API (worker/remote/client.ts) against a real API server: a refusal
// is the server's own code and message, not one guessed from the HTTP status (a 403, a 409 and
// a 401 used to come out alike as REFUSED, a 404 as INVALID, and the issues were dropped).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../contract/api-error.js';
import { issueWorkerToken } from '../../main/engine/api/auth.js';
import { workerApi } from '../../worker/remote/client.js';
import { apiSandbox, type ApiSandbox } from '../api/harness.js';
import { freePort, tendAsync } from './harness.js';

let api: ApiSandbox;
let token: string;

beforeAll(async () => {
  api = await apiSandbox();
  token = issueWorkerToken(api.engine.store, 'me@wa', Date.now());
  const created = await api.admin('POST', '/api/routines', { id: 'me@wa:sync', external: true, every: '1h' });
  expect(created.status).toBe(200);
});
afterAll(() => api?.close());

/** The ApiError a call fails with (the test fails if it succeeds or throws something else). */
async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('the worker client', () => {
  it('a token of another computer: 403 FORBIDDEN with the server message, named by the call', async () => {
    const err = await failure(workerApi(api.url, token).request('POST', '/api/worker/jobs/claim', { computer: 'me@wb', slots: 1 }, { what: 'claim' }));
    expect({ code: err.code, status: err.status, message: err.message }).toEqual({ code: 'FORBIDDEN', status: 403, message: 'claim: this token belongs to me@wa, not me@wb' });
  });

  it('a report that contradicts the server: 409 CONFLICT with its message', async () => {
    const w = workerApi(api.url, token);
    const path = `/api/external/${encodeURIComponent('me@wa:sync')}`;
    await w.request('POST', `${path}/start`, { runId: 'daily' });
    await w.request('POST', `${path}/complete`, { runId: 'daily' });
    const err = await failure(w.request('POST', `${path}/start`, { runId: 'daily' }, { what: 'me@wa:sync start' }));
    expect(err.code).toBe('CONFLICT');
    expect(err.status).toBe(409);
    expect(err.message).toBe('me@wa:sync start: run daily of me@wa:sync has ended already (COMPLETED): report start with a new run id');
  });

  it('a token the server does not know: 401 UNAUTHORIZED', async () => {
    const err = await failure(workerApi(api.url, 'not-a-token').request('GET', '/api/worker/commands?computer=me%40wa'));
    expect([err.code, err.status]).toEqual(['UNAUTHORIZED', 401]);
  });

  it('bad input: INVALID with the issues naming the field; an unknown route: NOT_FOUND', async () => {
    const w = workerApi(api.url, token);
    const bad = await failure(w.request('POST', '/api/worker/jobs/claim', { computer: 'me@wa', slots: 0 }));
    expect(bad.code).toBe('INVALID');
    expect(bad.issues).toEqual([{ path: 'slots', message: expect.any(String) }]);
    const missing = await failure(w.request('GET', '/api/worker/nothing-here'));
    expect([missing.code, missing.status]).toEqual(['NOT_FOUND', 404]);
  });

  it('nothing listening: NETWORK, with the reason and what to check', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const err = await failure(workerApi(url, token).request('GET', '/api/worker/commands', undefined, { what: 'commands' }));
    expect(err.code).toBe('NETWORK');
    expect(err.status).toBeNull();
    expect(err.message).toMatch(new RegExp(`^commands: no answer from ${url.replace(/\./g, '\\.')} \\(ECONNREFUSED\\): check that the daemon runs there`));
  });

  it('`tend report` exits 2 when the daemon calls the input invalid, 1 when it refuses it, saying which call', async () => {
    const report = (...args: string[]) => tendAsync(api.dir, ['report', 'me@wa:sync', ...args, '--server', api.url, '--token', token]);
    const bad = await report('start', '--run-id', 'not ok!');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tend: me@wa:sync start: runId: at most 64 letters, digits/);
    const ended = await report('start', '--run-id', 'daily');
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe('tend: me@wa:sync start: run daily of me@wa:sync has ended already (COMPLETED): report start with a new run id\n');
  });
});
