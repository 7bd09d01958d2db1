// A real daemon: events its API calls write reach its bus, so what listens there hears them — its
// log (warnings and errors), the event stream. Before, a call's job:cancelled reached the table only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { sse } from '../api/harness.js';
import { waitFor } from '../helpers/wait.js';
import { scratch } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

it('a job posted and cancelled over the daemon API: job:posted and job:cancelled on its stream, the warning in its log', async () => {
  box = scratch('tend-op-events-');
  const d = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  const api = JSON.parse(readFileSync(join(box.dir, 'api.json'), 'utf8')) as { url: string; token: string };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(api.url + path, { method: 'POST', headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as { value: { id: number } }).value;
  };
  const stream = await sse(api.url, '/api/events', api.token);
  try {
    // Addressed to a worker that never comes: it waits PENDING until cancelled.
    const job = await post('/api/jobs', { command: 'true', computer: 'me@elsewhere' });
    await post(`/api/jobs/${job.id}/cancel`, {});
    await waitFor(() => d.stderr.includes(`WARN job:cancelled job ${job.id} job ${job.id} cancelled by hand`), 20_000, 'the cancel in the daemon log');
    const pushed = () => stream.events.filter((m) => m.event === 'event').map((m) => JSON.parse(m.data) as { type: string; jobId: number | null });
    await waitFor(() => pushed().some((e) => e.type === 'job:cancelled'), 20_000, 'job:cancelled on the stream');
    expect(pushed().filter((e) => e.jobId === job.id).map((e) => e.type)).toEqual(['job:posted', 'job:cancelled']);
  } finally {
    stream.close();
    await stream.done;
  }
  expect(d.exit).toBeNull();
}, 60_000);
