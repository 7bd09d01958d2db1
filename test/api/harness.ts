// The HTTP API over a real engine (real SQLite file, real local backend) on 127.0.0.1, and a
// small fetch wrapper. Tests that need a whole daemon process use test/helpers/daemon.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, type ApiOptions, type ApiServer } from '../../main/engine/api/server.js';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import type { Settings } from '../../main/engine/settings.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body when it is JSON, else undefined. */
  json: any;
}

export interface CallOptions {
  token?: string | null;
  /** A value sent as JSON. */
  body?: unknown;
  /** Sent as is (malformed JSON, huge bodies); content-type defaults to application/json. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function call(base: string, method: string, path: string, o: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let body: string | Buffer | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers, body, signal: o.signal ?? AbortSignal.timeout(20_000) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Open a server-sent-events stream; `next(pred)` resolves with the first matching event. */
export async function sse(base: string, path: string, token: string) {
  const ctl = new AbortController();
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` }, signal: ctl.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const events: { event: string; data: string; id: string | null }[] = [];
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = 'message';
          let id: string | null = null;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
            else if (line.startsWith('id: ')) id = line.slice(4);
          }
          if (data.length) events.push({ event, data: data.join('\n'), id });
        }
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    events,
    done: pump,
    close: () => ctl.abort(),
  };
}

export interface ApiSandbox {
  dir: string;
  engine: Engine;
  server: ApiServer;
  url: string;
  token: string;
  call: (method: string, path: string, o?: CallOptions) => Promise<Reply>;
  /** With the admin token. */
  admin: (method: string, path: string, body?: unknown) => Promise<Reply>;
  close: () => Promise<void>;
}

export interface SandboxOptions extends ApiOptions {
  /** Run the scheduler loop (needed for runs and jobs to start). */
  loop?: boolean;
  /** Serve a minimal renderer (adds the public static route). */
  renderer?: boolean;
  /** The engine's settings (what the daemon reads from the environment). */
  settings?: Settings;
}

export async function apiSandbox(o: SandboxOptions = {}): Promise<ApiSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'tend-api-'));
  const engine = buildEngine({ dataDir: dir, intervalMs: 50, options: { killGraceMs: 1000 }, settings: o.settings });
  let rendererDir: string | null = null;
  if (o.renderer) {
    rendererDir = join(dir, 'renderer');
    mkdirSync(rendererDir);
    writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>Tend</title>');
  }
  const server = await startApi(engine, { ...o, rendererDir });
  if (o.loop) engine.start();
  const c = (method: string, path: string, co: CallOptions = {}) => call(server.url, method, path, co);
  return {
    dir,
    engine,
    server,
    url: server.url,
    token: server.token,
    call: c,
    admin: (method, path, body) => c(method, path, { token: server.token, body }),
    close: async () => {
      await server.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A concrete path for a route pattern: `:params` filled, `*` given a file name. */
export function concrete(url: string, value = 'me@box:nothing'): string {
  return url.replace(/:(\w+)/g, () => encodeURIComponent(value)).replace(/\*$/, 'index.html');
}

/** Routes whose handler streams (server-sent events). */
export const STREAMING = new Set(['/api/events', '/api/runs/:id/log/follow']);
