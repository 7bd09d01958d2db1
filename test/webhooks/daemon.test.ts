// Webhooks end to end: configured with the built CLI, delivered by a real `tend daemon run` to a
// receiver on 127.0.0.1 (which goes down and comes back), visible in `tend daemon status`, the
// CLI's delivery log and the API route the UI reads.
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { killTracked, scratch, tend, tendAsync, tendOk } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { Receiver } from './receiver.js';

const FIX = fileURLToPath(new URL('./fixtures/', import.meta.url));
const SECRET = 's3cr3t-signing-key';

let box: ReturnType<typeof scratch>;
let dir: string;
let daemon: Daemon;
let rx: Receiver;
let hookId: number;

async function api(method: string, path: string, body?: unknown, token: string | null = daemon.api().token) {
  const res = await fetch(daemon.api().url + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
}

beforeAll(async () => {
  box = scratch('tend-webhooks-');
  dir = box.dir;
  rx = await new Receiver().start(0);
  // Configured before any daemon runs: it lives in SQLite.
  hookId = tendOk<{ id: number }>(dir, ['webhook', 'add', rx.url, '--secret', SECRET, '--json']).id;
  daemon = await new Daemon(dir, { TEND_DAEMON_INTERVAL_MS: '100', TEND_WEBHOOK_BACKOFF_MS: '200', TEND_WEBHOOK_MAX_BACKOFF_MS: '400' }).ready();
}, 60_000);

afterAll(async () => {
  if (daemon && !daemon.exit) tend(dir, ['routine', 'stop', 'feed']);
  await daemon?.stop();
  await killTracked();
  await rx?.stop();
  box?.remove();
});

describe('webhooks from a running daemon', () => {
  it('a failed run is POSTed to the receiver, signed, with the documented payload', async () => {
    tendOk(dir, ['routine', 'add', 'broken', '--at', '2099-01-01T00:00', '--tz', 'UTC', '--retry', 'none', '--', 'sh', '-c', 'echo boom >&2; exit 3']);
    tend(dir, ['routine', 'run', 'broken']);
    const [req] = await rx.until((rs) => rs.some((r) => r.body?.event === 'error'), 15_000, 'the error notice');
    expect(req!.headers['x-tend-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(req!.raw).digest('hex')}`);
    expect(req!.body).toMatchObject({
      version: 1,
      event: 'error',
      routine: { id: expect.stringMatching(/:broken$/), schedule: 'default', kind: 'batch' },
      run: { status: 'ERROR', exitCode: 3, reason: 'exit 3', attempt: 1 },
      source: { type: 'run:failed' },
      tend: { version: expect.any(String), host: expect.any(String) },
    });
    expect(Date.parse(req!.body.at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a realtime routine that dies is restarted (restart), then recovers once running for its grace (recover)', async () => {
    const marker = join(dir, 'feed.marker');
    tendOk(dir, ['routine', 'add', 'feed', '--realtime', '--grace', '1s', '--', 'sh', join(FIX, 'fail-once.sh'), marker]);
    await rx.until((rs) => rs.some((r) => r.body?.event === 'restart'), 15_000, 'the restart notice');
    const restart = rx.requests.find((r) => r.body?.event === 'restart')!;
    expect(restart.body).toMatchObject({ routine: { id: expect.stringMatching(/:feed$/), kind: 'realtime' }, run: { status: 'EXITED', exitCode: 1 } });
    await rx.until((rs) => rs.some((r) => r.body?.event === 'recover' && r.body.routine.id.endsWith(':feed')), 15_000, 'the recover notice');
    const recover = rx.requests.find((r) => r.body?.event === 'recover')!;
    expect(recover.body.run).toMatchObject({ status: 'RUNNING' });
    expect(recover.body.run.id).not.toBe(restart.body.run.id);
  });

  it('a receiver that is down: the daemon retries with backoff and delivers once it is back', async () => {
    const port = rx.port;
    await rx.stop();
    const before = rx.requests.length;
    tend(dir, ['routine', 'run', 'broken']);
    const log = () => tendOk<{ deliveries: { id: number; state: string; attempts: number; error: string | null; event: string }[] }>(dir, ['webhook', 'deliveries', '--json']);
    await waitFor(() => log().deliveries.find((d) => d.event === 'error' && d.state === 'queued' && d.attempts >= 2), 15_000, 'failed attempts while the receiver is down');
    const waiting = log().deliveries.find((d) => d.state === 'queued')!;
    expect(waiting.error).toMatch(/^ECONNREFUSED/);
    // Visible in `tend daemon status` while it waits.
    const status = tend(dir, ['daemon', 'status']);
    expect(status.stdout).toMatch(/^webhooks: {2}1 receiver\(s\); 1 queued, \d+ delivered, 0 failed, 0 dropped$/m);
    expect(status.stdout).toMatch(new RegExp(`#${waiting.id} \\S+ error \\S+:broken → http://127\\.0\\.0\\.1:${port}/hook: queued after \\d+ attempt\\(s\\) \\(ECONNREFUSED`));
    await rx.start(port);
    await rx.until((rs) => rs.length > before, 15_000, 'the retried delivery');
    await waitFor(() => log().deliveries.find((d) => d.id === waiting.id)?.state === 'delivered', 10_000, 'the delivery to be logged');
    const done = log().deliveries.find((d) => d.id === waiting.id)!;
    expect(done.attempts).toBeGreaterThanOrEqual(3);
    expect(rx.requests[rx.requests.length - 1]!.headers['x-tend-delivery']).toBe(String(waiting.id));
    const json = JSON.parse(tend(dir, ['daemon', 'status', '--json']).stdout);
    expect(json.webhooks).toMatchObject({ receivers: 1, counts: { queued: 0, failed: 0, dropped: 0 } });
    expect(json.webhooks.recent[0]).toMatchObject({ id: waiting.id, state: 'delivered', statusCode: 200 });
  });

  it('the API route the UI reads: deliveries, receivers (redacted, secret never shown), add and remove', async () => {
    expect((await api('GET', '/api/webhooks/deliveries', undefined, null)).status).toBe(401);
    const log = await api('GET', '/api/webhooks/deliveries?limit=2');
    expect(log.status).toBe(200);
    expect(log.json.ok).toBe(true);
    expect(log.json.value.deliveries).toHaveLength(2);
    expect(log.json.value.counts.delivered).toBeGreaterThanOrEqual(3);
    expect((await api('GET', '/api/webhooks/deliveries?limit=0')).json).toMatchObject({ ok: false, error: { code: 'INVALID', issues: [{ path: 'limit' }] } });

    const added = await api('POST', '/api/webhooks', { url: `http://127.0.0.1:${rx.port}/services/T0/B0/XYZTOKEN`, events: ['recover'] });
    expect(added.json).toMatchObject({ ok: true, value: { url: `http://127.0.0.1:${rx.port}/services/…`, events: ['recover'], routineId: null, signed: false } });
    const list = await api('GET', '/api/webhooks');
    expect(list.json.value.map((h: any) => h.id)).toEqual([hookId, added.json.value.id]);
    expect(JSON.stringify(list.json)).not.toContain('XYZTOKEN');
    expect(JSON.stringify(list.json)).not.toContain(SECRET);
    expect(list.json.value[0]).toMatchObject({ signed: true });
    expect((await api('POST', '/api/webhooks', { url: 'gopher://x' })).json).toMatchObject({ ok: false, error: { code: 'INVALID', issues: [{ path: 'url' }] } });
    // The CLI shows whole URLs only when asked.
    expect(tendOk(dir, ['webhook', 'list'])).not.toContain('XYZTOKEN');
    expect(tendOk(dir, ['webhook', 'list', '--show-urls'])).toContain('XYZTOKEN');
    expect((await api('DELETE', `/api/webhooks/${added.json.value.id}`)).json).toMatchObject({ ok: true });
    expect((await api('DELETE', `/api/webhooks/${added.json.value.id}`)).status).toBe(404);
    expect((await api('GET', '/api/webhooks')).json.value).toHaveLength(1);
  });

  it('tend webhook test, remove, and refusals', async () => {
    const n = rx.requests.length;
    // Not spawnSync: the receiver answering it lives in this process.
    expect(await tendAsync(dir, ['webhook', 'test', String(hookId)])).toEqual({ code: 0, stdout: `webhook ${hookId}: HTTP 200\n`, stderr: '' });
    await rx.until((rs) => rs.length === n + 1);
    expect(rx.requests[n]!.body).toMatchObject({ version: 1, event: 'test', routine: null, run: null });
    expect(rx.requests[n]!.headers['x-tend-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);

    const bad = tend(dir, ['webhook', 'add', 'http://x', '--events', 'error,nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('tend: --events: unknown event nope: use error, delayed, restart, recover\n');
    expect(tend(dir, ['webhook', 'remove', 'abc']).code).toBe(2);
    expect(tend(dir, ['webhook', 'remove', '999']).stderr).toBe('tend: webhook 999 not found\n');
    expect(tendOk(dir, ['webhook', 'remove', String(hookId)])).toBe(`webhook ${hookId} removed\n`);
    expect(tendOk(dir, ['webhook', 'list'])).toBe('no webhooks (tend webhook add URL)\n');
  });
});
