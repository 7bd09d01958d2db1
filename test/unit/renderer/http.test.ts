// @vitest-environment node
// The browser transport: bearer token on every request, contract errors as values, events over
// fetch-streamed SSE with replay after a reconnect, and log follows.
import { describe, expect, it } from 'vitest';
import type { ConnectionState } from '../../../renderer/src/api/client.js';
import { createHttpClient } from '../../../renderer/src/api/http.js';
import { tick } from './fake-client.js';

/** A text/event-stream body the test writes to. */
function sseBody() {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
  const enc = new TextEncoder();
  return { body, write: (s: string) => ctl.enqueue(enc.encode(s)), close: () => ctl.close() };
}

describe('HTTP transport', () => {
  it('sends the token, builds the route from the contract table and returns errors as values', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const client = createHttpClient({
      base: 'http://d',
      token: 'T0K',
      fetch: async (url, init) => {
        seen.push({ url: String(url), init: init ?? {} });
        if (String(url).includes('/api/events')) return new Response(sseBody().body, { status: 200 });
        return new Response(JSON.stringify({ ok: false, error: { code: 'INVALID', message: 'cron: bad', issues: [{ path: 'cron', message: 'bad' }] } }), { status: 400 });
      },
    });
    const r = await client.call('routines.restart', { id: 'me@box:a/b' });
    expect(r).toEqual({ ok: false, error: { code: 'INVALID', message: 'cron: bad', issues: [{ path: 'cron', message: 'bad' }] } });
    const call = seen.find((s) => s.url.includes('/restart'))!;
    expect(call.url).toBe('http://d/api/routines/me%40box%3Aa%2Fb/restart');
    expect(call.init.method).toBe('POST');
    expect((call.init.headers as Record<string, string>).authorization).toBe('Bearer T0K');
    client.close();
  });

  it('a network failure is a NETWORK error, not a throw', async () => {
    const client = createHttpClient({ base: 'http://d', token: 't', fetch: async () => Promise.reject(new TypeError('fetch failed')), maxBackoffMs: 10 });
    const r = await client.call('routines.list', {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.code).toBe('NETWORK');
    client.close();
  });

  it('pushes events and passes, and resumes after the last event id when the stream drops', async () => {
    const streams: ReturnType<typeof sseBody>[] = [];
    const urls: string[] = [];
    const client = createHttpClient({
      base: '',
      token: 't',
      maxBackoffMs: 10,
      fetch: async (url) => {
        urls.push(String(url));
        const s = sseBody();
        streams.push(s);
        return new Response(s.body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
      },
    });
    const states: ConnectionState[] = [];
    client.onConnection((s) => states.push(s));
    const types: string[] = [];
    client.on('event', (e) => types.push(`${e.id}:${e.type}`));
    client.on('pass', () => types.push('pass'));
    await tick();
    streams[0]!.write(': connected\n\nid: 41\nevent: event\ndata: {"id":41,"type":"run:running","routineId":"a"}\n\nevent: pass\ndata: {"at":1}\n\n');
    await tick();
    streams[0]!.close();
    await tick(50);
    expect(types).toEqual(['41:run:running', 'pass']);
    expect(urls[1]).toBe('/api/events?after=41');
    expect(states).toEqual(['connecting', 'live', 'offline', 'live']);
    client.close();
  });

  it('an unauthorised page stops retrying and says so', async () => {
    let n = 0;
    const client = createHttpClient({ base: '', token: 'wrong', maxBackoffMs: 10, fetch: async () => (n++, new Response('{"ok":false,"error":{"code":"UNAUTHORIZED","message":"no"}}', { status: 401 })) });
    const states: ConnectionState[] = [];
    client.onConnection((s) => states.push(s));
    await tick(50);
    expect(states.at(-1)).toBe('unauthorized');
    expect(n).toBe(1);
    client.close();
  });

  it('follows a log: chunks as JSON strings, then the end reason', async () => {
    const s = sseBody();
    const client = createHttpClient({ base: '', token: 't', fetch: async (url) => (String(url).includes('/follow') ? new Response(s.body, { status: 200 }) : new Response(sseBody().body)) });
    const got: string[] = [];
    let ended = '';
    client.follow('r-1', 'stderr', { chunk: (t) => got.push(t), end: (r) => (ended = r) });
    s.write('event: chunk\ndata: "line 1\\n"\n\nevent: chunk\ndata: "line 2\\n"\n\nevent: end\ndata: {"reason":"finished"}\n\n');
    s.close();
    await tick(20);
    expect(got.join('')).toBe('line 1\nline 2\n');
    expect(ended).toBe('finished');
    client.close();
  });
});
