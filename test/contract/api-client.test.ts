// The API's one client against a real HTTP server that misbehaves in the ways a Tend client must
// name: an answer that is not the API's, a body that stalls past the timeout, a caller who gives up.
// (Its answers from a real daemon: test/app/client.test.ts, test/pool/worker-client.test.ts.)
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApi } from '../../contract/api-client.js';
import { ApiError } from '../../contract/api-error.js';

let server: Server | null = null;
const open = new Set<ServerResponse>();
afterEach(async () => {
  for (const res of open) res.destroy();
  open.clear();
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

async function serve(handle: (path: string, res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    open.add(res);
    handle(req.url ?? '', res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe('createApi', () => {
  it('something that is not the API answering is INTERNAL, with its status', async () => {
    const url = await serve((_, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'));
    const err = await failure(createApi({ base: url, token: 't' }).request('GET', '/api/routines'));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'INTERNAL', status: 502, message: `${url} answered HTTP 502, not JSON: is it a Tend daemon?` });
  });

  it('a body that stalls past the timeout is NETWORK, not a hang', async () => {
    const url = await serve((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"ok":');
    });
    const err = await failure(createApi({ base: url, token: 't', timeoutMs: 300 }).request('GET', '/api/routines', undefined, { what: 'routines' }));
    expect(err).toMatchObject({ code: 'NETWORK', status: null, message: `routines: no answer from ${url} (the answer did not arrive within 300 ms)` });
  });

  it("the caller's abort is passed through as it is, not called a failure of the daemon", async () => {
    const url = await serve(() => undefined);
    const stop = new AbortController();
    const pending = failure(createApi({ base: url, token: 't' }).request('GET', '/api/routines', undefined, { signal: stop.signal }));
    stop.abort(new Error('the user closed the window'));
    const err = await pending;
    expect(err).not.toBeInstanceOf(ApiError);
    expect((err as Error).message).toBe('the user closed the window');
  });

  it('a stream refused before its first message throws the server code; onOpen only for an accepted one', async () => {
    const url = await serve((path, res) => {
      if (path.startsWith('/refused')) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false,"error":{"code":"NOT_FOUND","message":"run r-9 not found"}}');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(': hello\n\nevent: end\ndata: {}\n\n');
    });
    const api = createApi({ base: url, token: null });
    let opened = 0;
    const err = await failure(api.stream('/refused', () => undefined, { onOpen: () => opened++ }));
    expect(err).toMatchObject({ code: 'NOT_FOUND', status: 404, message: 'run r-9 not found' });
    expect(opened).toBe(0);
    const events: string[] = [];
    await api.stream('/ok', (m) => events.push(m.event), { onOpen: () => opened++ });
    expect([opened, events]).toEqual([1, ['end']]);
  });
});
