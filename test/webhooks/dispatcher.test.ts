// Webhook delivery over a real Scheduler (real Store, scripted TestBackend, manual clock) to a
// real HTTP receiver on 127.0.0.1: which run transitions become notices, the versioned payload,
// per-routine and per-event receivers, retries with backoff while the receiver is down, the
// bounded queue dropping the oldest with a logged reason, no replay after a restart.
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRow } from '../../main/engine/domain/types.js';
import { runNow } from '../../main/engine/ops/control.js';
import { WebhookDispatcher, type WebhookOptions } from '../../main/engine/webhooks/dispatcher.js';
import { addWebhook, deliveryLog, removeWebhook } from '../../main/engine/webhooks/ops.js';
import { WebhookStore } from '../../main/engine/webhooks/store.js';
import { Fixture, full, MIN, SEC } from '../helpers/engine-fixture.js';
import { waitFor } from '../helpers/wait.js';
import { freePort, Receiver } from './receiver.js';

let f: Fixture;
let d: WebhookDispatcher | null = null;
const receivers: Receiver[] = [];

afterEach(async () => {
  await d?.stop();
  d = null;
  for (const r of receivers.splice(0)) await r.stop();
  f?.close();
});

async function receiver(): Promise<Receiver> {
  const r = await new Receiver().start(0);
  receivers.push(r);
  return r;
}

function dispatcher(o: Partial<WebhookOptions> = {}): WebhookDispatcher {
  d = new WebhookDispatcher({ store: f.store, now: () => f.now(), log: (e) => f.scheduler.ctx.events.log(e), bus: f.scheduler.bus }, { pollMs: 20, backoffMs: 5 * SEC, timeoutMs: 2000, ...o });
  d.start();
  return d;
}

const wh = () => new WebhookStore(f.store.db);
const hook = (input: Record<string, unknown>) => addWebhook(f.store, input, f.now());

/** A realtime `feed` (grace 10 s) with a receiver: its first instance ran, died (exit 1), and the restart notice came. */
async function feedRestartedOnce(): Promise<{ r: Receiver; first: RunRow }> {
  f = new Fixture();
  f.define({ id: 'feed', realtime: true, command: 'collector', grace: '10s' });
  const r = await receiver();
  hook({ url: r.url, routine: full('feed') });
  dispatcher();
  await f.pass();
  const first = f.only('feed');
  f.advance(SEC);
  await f.pass();
  expect(f.run(first.id).status).toBe('RUNNING');
  f.backend.finish(first.id, { exitCode: 1 });
  f.advance(SEC);
  await f.pass();
  expect(f.run(first.id).status).toBe('EXITED');
  await r.until((rs) => rs.length === 1);
  return { r, first };
}

/** A batch routine run by hand until the backend reports it, then ended with this exit code. */
async function runAndEnd(id: string, exitCode: number): Promise<string> {
  const run = runNow(f.control(), full(id));
  await f.pass();
  f.backend.finish(run.id, { exitCode });
  f.advance(SEC);
  await f.pass();
  return run.id;
}

describe('notices', () => {
  it('a failed run → error; the next completed run → recover; a completed run with no trouble → nothing', async () => {
    f = new Fixture();
    f.define({ id: 'dl', at: '2099-01-01T00:00', retry: 'none' });
    f.define({ id: 'fine', at: '2099-01-01T00:00', retry: 'none' });
    const r = await receiver();
    hook({ url: r.url, secret: 'a-shared-secret' });
    dispatcher();

    await runAndEnd('fine', 0);
    const failed = await runAndEnd('dl', 2);
    await r.until((rs) => rs.length === 1);
    const [e] = r.requests;
    expect(e!.method).toBe('POST');
    expect(e!.path).toBe('/hook');
    expect(e!.headers['content-type']).toBe('application/json');
    expect(e!.headers['x-tend-event']).toBe('error');
    expect(e!.headers['x-tend-attempt']).toBe('1');
    expect(e!.headers['user-agent']).toMatch(/^tend\//);
    expect(e!.headers['x-tend-signature']).toBe(`sha256=${createHmac('sha256', 'a-shared-secret').update(e!.raw).digest('hex')}`);
    expect(e!.body).toMatchObject({
      version: 1,
      event: 'error',
      routine: { id: full('dl'), name: 'dl', schedule: 'default', kind: 'batch', external: false },
      run: { id: failed, status: 'ERROR', exitCode: 2, signal: null, reason: 'exit 2', manual: true, attempt: 1 },
      source: { type: 'run:failed' },
    });
    expect(e!.body.message).toContain(full('dl'));
    expect(e!.body.id).toBe(`tend-${e!.body.source.eventId}-error`);
    expect(e!.headers['x-tend-delivery']).toMatch(/^\d+$/);

    await runAndEnd('dl', 0);
    await r.until((rs) => rs.length === 2);
    expect(r.requests[1]!.body).toMatchObject({ version: 1, event: 'recover', routine: { id: full('dl') }, run: { status: 'COMPLETED' } });
    expect(r.requests[1]!.body.message).toMatch(/recovered: run \S+ completed \(after error\)/);
    // Nothing more: `fine` never was in trouble, and a second success of dl recovers nothing.
    await runAndEnd('dl', 0);
    d!.scan();
    await waitFor(() => wh().counts().queued === 0, 5000, 'the queue to drain');
    expect(r.requests).toHaveLength(2);
    expect(deliveryLog(f.store).counts).toEqual({ queued: 0, delivered: 2, failed: 0, dropped: 0 });
  });

  it('retries of one scheduled instance are one error notice', async () => {
    f = new Fixture();
    f.define({ id: 'flaky', at: '2099-01-01T00:00', retry: { every: 60 * SEC, for: 10 * MIN } });
    const r = await receiver();
    hook({ url: r.url, events: 'error' });
    dispatcher();
    await runAndEnd('flaky', 1);
    const retry = f.latest('flaky');
    expect(retry).toMatchObject({ status: 'PENDING', attempt: 2 });
    f.advance(61 * SEC);
    await f.pass();
    f.backend.finish(retry.id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(retry.id).status).toBe('ERROR');
    d!.scan();
    await r.until((rs) => rs.length === 1);
    await waitFor(() => wh().counts().queued === 0, 5000, 'the queue to drain');
    expect(r.requests.map((x) => x.body.run.attempt)).toEqual([1]);
  });

  it('a run that is not started within its tolerance → delayed, with the reason it waits', async () => {
    f = new Fixture();
    f.define({ id: 'late', at: '2026-01-05T09:01', tolerance: '30s' });
    const r = await receiver();
    hook({ url: r.url, events: ['delayed', 'recover'] });
    dispatcher();
    f.backend.setHealth(false, 'disk full');
    f.advance(MIN);
    await f.pass();
    expect(f.only('late').status).toBe('PENDING');
    f.advance(31 * SEC);
    await f.pass();
    expect(f.only('late').status).toBe('DELAYED');
    await r.until((rs) => rs.length === 1);
    expect(r.requests[0]!.body).toMatchObject({ event: 'delayed', run: { status: 'DELAYED', reason: 'backend local paused: disk full' } });
    expect(r.requests[0]!.body.message).toMatch(/DELAYED: due 2026-01-05T09:01:00.000Z/);
    // The backend comes back, the run starts late and completes: recovered.
    f.backend.setHealth(true);
    await f.pass();
    f.backend.finish(f.only('late').id, { exitCode: 0 });
    f.advance(SEC);
    await f.pass();
    await r.until((rs) => rs.length === 2);
    expect(r.requests[1]!.body).toMatchObject({ event: 'recover', run: { status: 'COMPLETED' } });
  });

  it('a realtime routine that dies → restart; its new instance RUNNING for the startup grace → recover', async () => {
    const { r, first } = await feedRestartedOnce();
    expect(r.requests[0]!.body).toMatchObject({ event: 'restart', routine: { id: full('feed'), kind: 'realtime' }, run: { id: first.id, status: 'EXITED', exitCode: 1 } });
    expect(r.requests[0]!.body.message).toContain('Tend starts it again');

    const second = f.latest('feed');
    expect(second.id).not.toBe(first.id);
    f.advance(SEC);
    await f.pass();
    expect(f.run(second.id).status).toBe('RUNNING');
    // Running, but not yet for its grace: no recovery yet.
    f.advance(5 * SEC);
    d!.scan();
    expect(wh().trouble(full('feed'))).toMatchObject({ event: 'restart', runId: first.id });
    f.advance(6 * SEC);
    await f.pass();
    await r.until((rs) => rs.length === 2);
    expect(r.requests[1]!.body).toMatchObject({ event: 'recover', run: { id: second.id, status: 'RUNNING' }, source: { eventId: null, type: null } });
    expect(r.requests[1]!.body.id).toBe(`tend-recover-${second.id}`);
    expect(wh().trouble(full('feed'))).toBeNull();
  });

  it("recovers a new instance whose start reads a little earlier than its predecessor's death (a start from /proc is ±10 ms)", async () => {
    const { r, first } = await feedRestartedOnce();
    const since = wh().trouble(full('feed'))!.since;
    const second = f.latest('feed');
    expect(second.id).not.toBe(first.id);
    f.backend.markRunning(second.id, { startedAt: since - 5 });
    f.advance(SEC);
    await f.pass();
    expect(f.run(second.id)).toMatchObject({ status: 'RUNNING', startedAt: since - 5 });
    f.advance(11 * SEC);
    await f.pass();
    await r.until((rs) => rs.length === 2);
    expect(r.requests[1]!.body).toMatchObject({ event: 'recover', run: { id: second.id, status: 'RUNNING' } });
  });

  it('with no receiver left, a scan drops the troubles it kept and, from then on, opens no write transaction', async () => {
    const { r } = await feedRestartedOnce();
    expect(wh().trouble(full('feed'))).not.toBeNull();
    for (const h of wh().hooks()) removeWebhook(f.store, h.id, f.now());
    let writes = 0;
    const tx = f.store.tx.bind(f.store);
    f.store.tx = (fn) => {
      writes++;
      return tx(fn);
    };
    d!.scan();
    expect(wh().trouble(full('feed'))).toBeNull();
    writes = 0;
    for (let i = 0; i < 5; i++) d!.scan();
    expect(writes).toBe(0);
    // A receiver added later hears nothing of the old trouble once the new instance is up.
    hook({ url: r.url, routine: full('feed') });
    f.advance(11 * SEC);
    await f.pass();
    d!.scan();
    expect(r.requests.length).toBe(1);
  });

  it('a crash loop → error (after the restarts)', async () => {
    f = new Fixture();
    f.define({ id: 'feed', realtime: true, command: 'collector' });
    const r = await receiver();
    hook({ url: r.url, events: 'error' });
    dispatcher();
    await f.pass();
    for (let i = 0; i < 20 && f.latest('feed').status !== 'ERROR'; i++) {
      const run = f.latest('feed');
      if (run.status === 'STARTING' || run.status === 'RUNNING') f.backend.finish(run.id, { exitCode: 1 });
      f.advance(20 * SEC);
      await f.pass();
    }
    expect(f.latest('feed').status).toBe('ERROR');
    await r.until((rs) => rs.length === 1);
    expect(r.requests[0]!.body).toMatchObject({ event: 'error', source: { type: 'routine:crash-loop' }, run: { status: 'ERROR' } });
    expect(r.requests[0]!.body.run.reason).toMatch(/^crash loop: 5 quick deaths/);
  });
});

describe('receivers', () => {
  it('per routine and per event: each receiver gets exactly what it asked for', async () => {
    f = new Fixture();
    f.define({ id: 'a', at: '2099-01-01T00:00', retry: 'none' });
    f.define({ id: 'b', at: '2099-01-01T00:00', retry: 'none' });
    const errorsOfAll = await receiver();
    const everythingOfA = await receiver();
    const recoveriesOfB = await receiver();
    hook({ url: errorsOfAll.url, events: 'error' });
    hook({ url: everythingOfA.url, routine: full('a') });
    hook({ url: recoveriesOfB.url, routine: full('b'), events: ['recover'] });
    dispatcher();
    await runAndEnd('a', 1);
    await runAndEnd('b', 1);
    await runAndEnd('a', 0);
    await runAndEnd('b', 0);
    d!.scan();
    await waitFor(() => wh().counts().delivered === 5, 10_000, 'five deliveries');
    const seen = (r: Receiver) => r.requests.map((x) => `${x.body.event} ${x.body.routine.id.split(':')[1]}`);
    expect(seen(errorsOfAll)).toEqual(['error a', 'error b']);
    expect(seen(everythingOfA)).toEqual(['error a', 'recover a']);
    expect(seen(recoveriesOfB)).toEqual(['recover b']);
  });

  it('refuses a bad configuration naming the field', () => {
    f = new Fixture();
    const issue = (input: Record<string, unknown>) => {
      try {
        hook(input);
      } catch (err) {
        return (err as { issues: { path: string; message: string }[] }).issues[0];
      }
      throw new Error('accepted');
    };
    expect(issue({ url: 'ftp://x/y' })).toEqual({ path: 'url', message: 'only http and https receivers are supported, not ftp' });
    expect(issue({ url: 'not a url' })).toEqual({ path: 'url', message: 'not a URL' });
    expect(issue({ url: 'http://x', events: 'error,boom' })).toEqual({ path: 'events', message: 'unknown event boom: use error, delayed, restart, recover' });
    expect(issue({ url: 'http://x', events: [] })).toMatchObject({ path: 'events' });
    expect(issue({ url: 'http://x', routine: full('nope') })).toEqual({ path: 'routine', message: `unknown routine ${full('nope')}` });
    expect(issue({ url: 'http://x', secret: 'short' })).toMatchObject({ path: 'secret' });
    expect(issue({ url: 'http://x', colour: 'red' })).toMatchObject({ message: expect.stringContaining('colour') });
  });
});

describe('delivery', () => {
  it('a receiver that is down: retried with backoff, delivered once it is back; the log says what happened', async () => {
    f = new Fixture();
    f.define({ id: 'dl', at: '2099-01-01T00:00', retry: 'none' });
    const port = await freePort();
    const r = new Receiver();
    r.port = port;
    receivers.push(r);
    hook({ url: `http://127.0.0.1:${port}/hook` });
    dispatcher({ backoffMs: 10 * SEC, maxAttempts: 10 });
    await runAndEnd('dl', 1);
    await waitFor(() => wh().recent(1)[0]?.attempts === 1, 5000, 'the first attempt to fail');
    let [row] = wh().recent(1);
    expect(row).toMatchObject({ state: 'queued', attempts: 1, statusCode: null, nextAt: f.now() + 10 * SEC });
    expect(row!.error).toMatch(/^ECONNREFUSED.*; retry 2 of 10 at /);
    // Not retried before its time.
    d!.nudge();
    await new Promise((res) => setTimeout(res, 100));
    expect(wh().recent(1)[0]!.attempts).toBe(1);
    // Second attempt after 10 s, still down; the next waits 20 s (doubling).
    f.advance(10 * SEC);
    await waitFor(() => wh().recent(1)[0]?.attempts === 2, 5000, 'the second attempt');
    expect(wh().recent(1)[0]!.nextAt).toBe(f.now() + 20 * SEC);
    // The receiver comes back on the same port, answering 503 once, then 200.
    let n = 0;
    r.respond = () => (n++ === 0 ? 503 : 200);
    await r.start(port);
    f.advance(20 * SEC);
    await waitFor(() => wh().recent(1)[0]?.attempts === 3, 5000, 'the third attempt (503)');
    expect(wh().recent(1)[0]).toMatchObject({ state: 'queued', statusCode: 503 });
    expect(wh().recent(1)[0]!.error).toMatch(/^HTTP 503; retry 4 of 10/);
    f.advance(40 * SEC);
    await waitFor(() => wh().recent(1)[0]?.state === 'delivered', 5000, 'delivery');
    [row] = wh().recent(1);
    expect(row).toMatchObject({ state: 'delivered', attempts: 4, statusCode: 200, error: null });
    expect(r.requests.map((x) => x.status)).toEqual([503, 200]);
    expect(r.requests.map((x) => x.headers['x-tend-attempt'])).toEqual(['3', '4']);
    // The same notice id on every attempt: receivers can deduplicate.
    expect(new Set(r.requests.map((x) => x.body.id)).size).toBe(1);
  });

  it('bounded queue: past queueMax the oldest undelivered is dropped, with the reason logged', async () => {
    f = new Fixture();
    for (const id of ['r1', 'r2', 'r3', 'r4', 'r5']) f.define({ id, at: '2099-01-01T00:00', retry: 'none' });
    const port = await freePort();
    hook({ url: `http://127.0.0.1:${port}/hook`, events: 'error' });
    dispatcher({ queueMax: 3, backoffMs: 10 * SEC });
    const runs = ['r1', 'r2', 'r3', 'r4', 'r5'].map((id) => runNow(f.control(), full(id)));
    await f.pass();
    for (const run of runs) f.backend.finish(run.id, { exitCode: 1 });
    f.advance(SEC);
    await f.pass();
    await waitFor(() => wh().counts().dropped === 2, 5000, 'two deliveries to be dropped');
    // Their first attempts are over (and their retries timed) before the clock moves.
    await waitFor(() => wh().oldestQueued(10).every((x) => x.attempts === 1), 5000, 'the first attempts of the kept three');
    const log = deliveryLog(f.store, 10);
    const dropped = log.deliveries.filter((x) => x.state === 'dropped');
    expect(dropped.map((x) => x.routineId).sort()).toEqual([full('r1'), full('r2')]);
    for (const x of dropped) expect(x.error).toMatch(/^queue full \(3 waiting\): dropped the oldest undelivered/);
    const events = f.events('webhook:dropped');
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ level: 'warn', routineId: full('r1') });
    expect(events[0]!.message).toMatch(/^webhook delivery \d+ \(error to http:\/\/127\.0\.0\.1:\d+\/hook\) dropped: queue full/);
    // The receiver comes up: the three kept are delivered, the dropped never.
    const r = new Receiver();
    r.port = port;
    receivers.push(r);
    await r.start(port);
    f.advance(10 * SEC);
    await r.until((rs) => rs.length === 3);
    expect(r.requests.map((x) => x.body.routine.id).sort()).toEqual([full('r3'), full('r4'), full('r5')]);
    // Answered first, logged just after.
    await waitFor(() => wh().counts().delivered === 3, 5000, 'three deliveries logged');
    expect(deliveryLog(f.store).counts).toEqual({ queued: 0, delivered: 3, failed: 0, dropped: 2 });
  });

  it('a 4xx answer is not retried; repeated 5xx give up after maxAttempts; both logged', async () => {
    f = new Fixture();
    f.define({ id: 'dl', at: '2099-01-01T00:00', retry: 'none' });
    const refuses = await receiver();
    refuses.respond = () => 400;
    const broken = await receiver();
    broken.respond = () => 500;
    hook({ url: refuses.url, events: 'error' });
    hook({ url: broken.url, events: 'error' });
    dispatcher({ maxAttempts: 2, backoffMs: SEC });
    await runAndEnd('dl', 1);
    // Answered, and logged (the retry timed from now) before the clock moves.
    await waitFor(() => wh().counts().failed === 1 && wh().oldestQueued(1)[0]?.attempts === 1, 5000, 'first attempts');
    f.advance(SEC);
    await waitFor(() => wh().counts().failed === 2, 5000, 'both to fail');
    expect(refuses.requests).toHaveLength(1);
    expect(broken.requests).toHaveLength(2);
    const log = deliveryLog(f.store).deliveries;
    expect(log.find((x) => x.url.includes(String(refuses.port)))).toMatchObject({ state: 'failed', attempts: 1, statusCode: 400, error: 'HTTP 400: the receiver refused it (not retried)' });
    expect(log.find((x) => x.url.includes(String(broken.port)))).toMatchObject({ state: 'failed', attempts: 2, statusCode: 500, error: 'gave up after 2 attempts; last: HTTP 500' });
    expect(f.events('webhook:failed')).toHaveLength(2);
  });

  it('removing a receiver drops what was queued for it', async () => {
    f = new Fixture();
    f.define({ id: 'dl', at: '2099-01-01T00:00', retry: 'none' });
    const h = hook({ url: `http://127.0.0.1:${await freePort()}/hook` });
    dispatcher({ backoffMs: 60 * SEC });
    await runAndEnd('dl', 1);
    await waitFor(() => wh().recent(1)[0]?.attempts === 1, 5000, 'a failed attempt');
    removeWebhook(f.store, h.id, f.now());
    expect(wh().recent(1)[0]).toMatchObject({ state: 'dropped', error: 'webhook removed before delivery' });
    expect(wh().hooks()).toEqual([]);
  });

  it('a restarted dispatcher sends what happened while it was stopped, and nothing twice', async () => {
    f = new Fixture();
    f.define({ id: 'dl', at: '2099-01-01T00:00', retry: 'none' });
    const r = await receiver();
    hook({ url: r.url, events: 'error' });
    dispatcher();
    await runAndEnd('dl', 1);
    await r.until((rs) => rs.length === 1);
    await waitFor(() => wh().counts().delivered === 1, 5000, 'the delivery to be logged'); // else stop() abandons it: sent again later
    await d!.stop();
    await runAndEnd('dl', 2);
    await new Promise((res) => setTimeout(res, 100));
    expect(r.requests).toHaveLength(1);
    dispatcher();
    await r.until((rs) => rs.length === 2);
    expect(r.requests.map((x) => x.body.run.exitCode)).toEqual([1, 2]);
    await waitFor(() => wh().counts().delivered === 2, 5000, 'the second delivery to be logged');
    await d!.stop();
    dispatcher();
    d!.scan();
    await new Promise((res) => setTimeout(res, 100));
    expect(r.requests).toHaveLength(2);
  });
});
