// Following the log of a run that has not started yet (the page of a routine just started by
// hand): the stream waits for the run's directory and then carries its output, instead of ending.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { localComputer } from '../../main/engine/domain/schema.js';
import { apiSandbox, sse, type ApiSandbox } from './harness.js';

let api: ApiSandbox;
beforeAll(async () => {
  api = await apiSandbox(); // no loop yet: the run stays PENDING until the test starts it
});
afterAll(() => api.close());

it('waits for a PENDING run to start, then streams what it writes', async () => {
  const id = `${localComputer()}:api/follow-early`;
  const enc = encodeURIComponent;
  const created = await api.admin('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', retry: 'none', command: 'sh', args: ['-c', 'echo first line'] });
  expect(created.status).toBe(200);
  const run = (await api.admin('POST', `/api/routines/${enc(id)}/run`)).json.value;
  expect(run.status).toBe('PENDING');
  const follow = await sse(api.url, `/api/runs/${enc(run.id)}/log/follow`, api.token);
  // The stream is open and has not ended while the run waits; the loop then starts the run.
  expect(follow.events.filter((e) => e.event === 'end')).toEqual([]);
  api.engine.start();
  await follow.done;
  expect(follow.events.filter((e) => e.event === 'chunk').map((e) => JSON.parse(e.data)).join('')).toBe('first line\n');
  expect(follow.events.at(-1)).toMatchObject({ event: 'end', data: '{"reason":"finished"}' });
});
