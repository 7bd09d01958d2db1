// POST /api/routines takes the short ids the CLI takes: `etl/download` is completed with this
// host's user@HOST (its dependencies too); a relative cwd, which has no meaning over HTTP, is refused.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localComputer } from '../../main/engine/domain/schema.js';
import { apiSandbox, type ApiSandbox } from './harness.js';

const ME = localComputer();
let api: ApiSandbox;
beforeAll(async () => {
  api = await apiSandbox();
});
afterAll(() => api.close());

it('a short id and short dependencies are completed with this host', async () => {
  const a = await api.admin('POST', '/api/routines', { id: 'etl/download', every: '1h', command: 'true' });
  expect(a.status, a.text).toBe(200);
  expect(a.json.value.id).toBe(`${ME}:etl/download`);
  const b = await api.admin('POST', '/api/routines', { id: 'etl/parse', every: '1h', command: 'true', after: ['etl/download'] });
  expect(b.status, b.text).toBe(200);
  expect(b.json.value).toMatchObject({ id: `${ME}:etl/parse`, dependencies: [`${ME}:etl/download`] });
});

it('a relative cwd is refused naming the field, and nothing is stored', async () => {
  const r = await api.admin('POST', '/api/routines', { id: 'etl/rel', every: '1h', command: './x.sh', cwd: 'sub' });
  expect(r.status).toBe(400);
  expect(r.json.error.issues).toEqual([{ path: 'cwd', message: 'must be an absolute path' }]);
  expect(api.engine.store.routines.get(`${ME}:etl/rel`)).toBeNull();
});
