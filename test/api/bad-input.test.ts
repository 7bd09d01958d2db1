// Bad input through the HTTP API gets a 400 naming the field and why, and changes nothing: a day
// that is not on the calendar, numeric ids that are not decimal digits, an edit that would change
// a routine's id.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localComputer } from '../../main/engine/domain/schema.js';
import { apiSandbox, type ApiSandbox } from './harness.js';

let api: ApiSandbox;
beforeAll(async () => {
  api = await apiSandbox();
});
afterAll(() => api.close());

const issues = (r: { json: any }) => (r.json?.error?.issues ?? []) as { path: string; message: string }[];

it.each([
  ['2024-13-45', 'month must be 01 to 12, got 13'],
  ['0000-00-00', 'year must be 0001 or later'],
  ['2024-02-30', 'day must be 01 to 29 in 2024-02, got 30'],
  ['yesterday', 'must be a day as YYYY-MM-DD'],
])('GET /api/runs?day=%s → 400 naming day', async (day, why) => {
  const r = await api.admin('GET', `/api/runs?day=${day}`);
  expect(r.status).toBe(400);
  expect(issues(r)).toEqual([{ path: 'day', message: why }]);
});

it('GET /api/runs?day=2024-02-29 (a real day) answers 200', async () => {
  const r = await api.admin('GET', '/api/runs?day=2024-02-29');
  expect(r.status).toBe(200);
  expect(r.json.value).toEqual([]);
});

it.each(['0x6', '1e3', '6.0', ' 6', '-1', '+6'])('job id %j is refused: decimal digits only', async (id) => {
  const r = await api.admin('GET', `/api/jobs/${encodeURIComponent(id)}`);
  expect(r.status).toBe(400);
  expect(issues(r)[0]).toMatchObject({ path: 'id' });
  expect(issues(r)[0]!.message).toMatch(/decimal digits|at least 1/);
});

it('a query number in another notation (limit=1e3) is refused too; decimal digits pass', async () => {
  expect((await api.admin('GET', '/api/jobs?limit=1e3')).status).toBe(400);
  expect((await api.admin('GET', '/api/events/recent?limit=0x10')).status).toBe(400);
  expect((await api.admin('GET', '/api/jobs?limit=10')).status).toBe(200);
});

it('PUT /api/routines/{id} with a different id inside changes is refused, and nothing changes', async () => {
  const id = `${localComputer()}:bad/rename`;
  expect((await api.admin('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', command: 'true' })).status).toBe(200);
  const r = await api.admin('PUT', `/api/routines/${encodeURIComponent(id)}`, { changes: { id: `${localComputer()}:bad/other`, name: 'renamed' } });
  expect(r.status).toBe(400);
  expect(issues(r)).toEqual([{ path: 'changes.id', message: expect.stringContaining('the id cannot be changed') }]);
  const shown = await api.admin('GET', `/api/routines/${encodeURIComponent(id)}`);
  expect(shown.json.value.name).toBe('bad/rename');
  expect((await api.admin('GET', `/api/routines/${encodeURIComponent(`${localComputer()}:bad/other`)}`)).status).toBe(404);
  // The same id inside changes is no change of id.
  expect((await api.admin('PUT', `/api/routines/${encodeURIComponent(id)}`, { changes: { id, name: 'renamed' } })).status).toBe(200);
});
