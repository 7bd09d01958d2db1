// The app's two ways to the engine: in-process (dispatch + bus) and attached (HTTP API + SSE),
// here against a real API server over a real engine. The SSE parser's own tests: test/contract/sse.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../contract/api-error.js';
import { engineClient, httpClient, toResult } from '../../main/app/client.js';
import { startApi, type ApiServer } from '../../main/engine/api/server.js';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import type { EventRow } from '../../main/engine/store/events.js';
import { Store } from '../../main/engine/store/store.js';
import { waitFor } from '../helpers/wait.js';

describe('toResult', () => {
  it('keeps the code and issues of engine and remote errors, and calls anything else INTERNAL', () => {
    expect(toResult(new ApiError('UNAUTHORIZED', 'no'))).toEqual({ ok: false, error: { code: 'UNAUTHORIZED', message: 'no' } });
    expect(toResult(new ApiError('INVALID', 'bad', [{ path: 'id', message: 'bad' }]))).toEqual({ ok: false, error: { code: 'INVALID', message: 'bad', issues: [{ path: 'id', message: 'bad' }] } });
    expect(toResult(new TypeError('boom'))).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'boom' } });
  });
});

describe('clients over a real engine', () => {
  let dir: string;
  let engine: Engine;
  let api: ApiServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tend-client-'));
    engine = buildEngine({ dataDir: dir, intervalMs: 100 });
    api = await startApi(engine);
    engine.start();
  });
  afterAll(async () => {
    await api.close();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the attached client calls every kind of route and gets what the in-process client gets', async () => {
    const local = engineClient(engine);
    const remote = httpClient({ url: api.url, token: api.token });
    try {
      const created = await remote.call('routines.create', { id: 'me@host:reports/daily', command: 'true', runtimes: ['07:00'], tz: 'UTC' });
      expect(created).toMatchObject({ id: 'me@host:reports/daily' });
      expect(await remote.call('routines.list', {})).toEqual(JSON.parse(JSON.stringify(await local.call('routines.list', {}))));
      expect(await remote.call('routines.show', { id: 'me@host:reports/daily' })).toMatchObject({ id: 'me@host:reports/daily', nextRuns: expect.any(Array) });
      expect(await remote.call('schedules.setMode', { name: 'default', mode: 'observe' })).toEqual({ name: 'default', mode: 'observe' });
      expect(await remote.call('schedules.list', {})).toMatchObject([{ name: 'default', mode: 'observe' }]);
      expect(await remote.call('events.recent', { limit: 2 })).toHaveLength(2);
      expect(await remote.call('routines.remove', { id: 'me@host:reports/daily' })).toEqual({ id: 'me@host:reports/daily', removed: true });
    } finally {
      remote.close();
    }
  });

  it('the attached client throws the API error with its code and issues', async () => {
    const remote = httpClient({ url: api.url, token: api.token });
    await expect(remote.call('routines.show', { id: 'me@host:missing' })).rejects.toMatchObject({ name: 'ApiError', code: 'NOT_FOUND', status: 404, message: 'routine me@host:missing not found' });
    await expect(remote.call('jobs.show', { id: 0 })).rejects.toMatchObject({ code: 'INVALID', issues: [{ path: 'id' }] });
    const wrong = httpClient({ url: api.url, token: 'wrong' });
    await expect(wrong.call('routines.list', {})).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    const nowhere = httpClient({ url: 'http://127.0.0.1:9', token: 'x', timeoutMs: 2000 });
    await expect(nowhere.call('routines.list', {})).rejects.toMatchObject({ code: 'NETWORK', status: null, message: expect.stringContaining('no answer from http://127.0.0.1:9 (bad port)') });
  });

  it('both clients hear engine events and passes', async () => {
    for (const client of [engineClient(engine), httpClient({ url: api.url, token: api.token })]) {
      const events: EventRow[] = [];
      let passes = 0;
      const off = client.subscribe({ event: (e) => events.push(e), pass: () => passes++ });
      try {
        // The stream is up once a pass arrives over it.
        await waitFor(() => passes > 0, 10_000, `${client.kind}: a pass`);
        engine.scheduler.ctx.events.log({ type: 'external:log', message: `ping ${client.kind}` });
        const got = await waitFor(() => events.find((e) => e.type === 'external:log' && e.message === `ping ${client.kind}`), 10_000, `${client.kind}: the event`);
        expect(got.message).toBe(`ping ${client.kind}`);
      } finally {
        off();
        client.close();
      }
    }
  });

  it('the in-process client also delivers rows written without the bus: by calls, and by other processes', async () => {
    const client = engineClient(engine, { pollMs: 50 });
    const events: EventRow[] = [];
    const off = client.subscribe({ event: (e) => events.push(e) });
    try {
      await client.call('routines.create', { id: 'me@host:pushed/created', command: 'true', runtimes: ['07:00'], tz: 'UTC' });
      await waitFor(() => events.find((e) => e.type === 'routine:created' && e.routineId === 'me@host:pushed/created'), 5_000, 'routine:created');
      // What the CLI does from its own process: append to the table over its own connection, no bus involved.
      const elsewhere = Store.open(engine.store.db.name);
      try {
        elsewhere.events.append({ type: 'external:log', message: 'from elsewhere' }, Date.now());
      } finally {
        elsewhere.close();
      }
      await waitFor(() => events.find((e) => e.message === 'from elsewhere'), 5_000, 'the row appended elsewhere');
      const ids = events.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      off();
      client.close();
    }
  });

  it('the attached client reconnects and replays the events it missed while disconnected', async () => {
    let streams = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (String(input).includes('/api/events?') || String(input).endsWith('/api/events')) {
        streams++;
        if (streams === 1) {
          // Happens while nobody listens: the reconnect must replay it.
          engine.scheduler.ctx.events.log({ type: 'external:log', message: 'while disconnected' });
          throw new TypeError('fetch failed');
        }
      }
      return fetch(input, init);
    };
    const states: boolean[] = [];
    const remote = httpClient({ url: api.url, token: api.token, fetch: flaky, onConnection: (up) => states.push(up) });
    const events: EventRow[] = [];
    remote.subscribe({ event: (e) => events.push(e) });
    try {
      await waitFor(() => events.some((e) => e.message === 'while disconnected'), 10_000, 'the missed event');
      expect(streams).toBe(2);
      expect(states).toEqual([false, true]);
    } finally {
      remote.close();
    }
  });
});
