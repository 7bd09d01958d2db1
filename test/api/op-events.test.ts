// Events that calls write (a job posted, a run requested, a job cancelled) reach everyone who
// listens to the engine — the bus, the event stream, a worker waiting for jobs — not only the
// table. Over a real engine and its HTTP API, with no pass running: nothing but the call itself
// can have told them.
import { afterEach, expect, it } from 'vitest';
import type { EventRow } from '../../main/engine/store/events.js';
import { waitFor, within } from '../helpers/wait.js';
import { apiSandbox, sse, type ApiSandbox } from './harness.js';

let box: ApiSandbox | null = null;
afterEach(async () => {
  await box?.close();
  box = null;
});

it('job:posted, run:requested and job:cancelled written by calls reach the bus and the event stream, and job:posted answers a waiting worker', async () => {
  box = await apiSandbox();
  const { engine } = box;
  const bus: EventRow[] = [];
  engine.bus.on('event', (e) => bus.push(e));
  const stream = await sse(box.url, '/api/events', box.token);
  try {
    // A worker's long poll for jobs, with a wait far longer than the test's deadline.
    const woken = engine.wake.wait('jobs', 'me@elsewhere', 10 * 60_000);

    const posted = await box.admin('POST', '/api/jobs', { command: 'true', computer: 'me@elsewhere' });
    expect(posted.status).toBe(200);
    const jobId = posted.json.value.id as number;
    await within(woken, 20_000, 'the waiting worker woken by job:posted');

    expect((await box.admin('POST', '/api/routines', { id: 'me@elsewhere:reports/daily', command: 'true', runtimes: ['07:00'], tz: 'UTC' })).status).toBe(200);
    const run = await box.admin('POST', `/api/routines/${encodeURIComponent('me@elsewhere:reports/daily')}/run`);
    expect(run.status).toBe(200);
    expect((await box.admin('POST', `/api/jobs/${jobId}/cancel`, {})).status).toBe(200);

    const expected = ['job:posted', 'routine:created', 'run:requested', 'job:cancelled'];
    await waitFor(() => bus.length >= expected.length, 20_000, 'the events on the bus');
    expect(bus.map((e) => e.type)).toEqual(expected);
    expect(bus[0]).toMatchObject({ type: 'job:posted', jobId });
    expect(bus[2]).toMatchObject({ type: 'run:requested', routineId: 'me@elsewhere:reports/daily', runId: run.json.value.id });

    const pushed = () => stream.events.filter((m) => m.event === 'event').map((m) => JSON.parse(m.data) as EventRow);
    await waitFor(() => pushed().length >= expected.length, 20_000, 'the events on the stream');
    expect(pushed()).toEqual(bus);
  } finally {
    stream.close();
    await stream.done;
  }
});
