// The HTTP API: every contract channel as a route (contract/routes.ts), bearer-token auth on every route
// but /health, server-sent events for engine events and log follows, an OpenAPI document.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { createRequire } from 'node:module';
import type { Engine } from '../engine.js';
import { TendError, toResultError } from '../errors.js';
import { authenticate, readApiFile, newToken, writeApiFile, type Principal } from './auth.js';
import type { Methods } from './methods.js';
import { onFirstCall } from './lazy.js';
import { EXTRA_ROUTES, ROUTES, type Channel, type RouteSpec, type Scope } from '../../../contract/routes.js';
import { serveRenderer } from './static.js';
import { poolRoutes } from '../pool/route-list.js';
import { metricsRoute } from '../metrics/route.js';
import { webhookRoutes } from '../webhooks/route-list.js';
import { Streams } from './streams.js';

/** Unset: the engine's settings (apiHost, apiPort, metricsPublic). */
export interface ApiOptions {
  host?: string;
  port?: number;
  metricsPublic?: boolean;
  /** Reuse the token of an existing api.json (bookmarked browser sessions keep working). */
  token?: string;
  bodyLimit?: number;
  rendererDir?: string | null;
}

export interface ApiContext {
  engine: Engine;
  /** Scope check for routes registered by plugins. */
  principal(req: FastifyRequest): Principal | null;
}

export interface ApiServer {
  app: FastifyInstance;
  url: string;
  token: string;
  /** Every registered route with its scope: what the auth tests enumerate. */
  routes: { method: string; url: string; scope: Scope }[];
  close(): Promise<void>;
}

const STATUS: Record<string, number> = { INVALID: 400, FORBIDDEN: 403, NOT_FOUND: 404, CONFLICT: 409, REFUSED: 409, UNAVAILABLE: 503, INTERNAL: 500 };

declare module 'fastify' {
  interface FastifyContextConfig {
    scope?: Scope;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export async function startApi(engine: Engine, o: ApiOptions = {}): Promise<ApiServer> {
  const host = o.host ?? engine.settings.apiHost;
  // A restarted daemon keeps its address, so workers and bookmarked browser tabs find it again.
  const previous = readApiFile(engine.dataDir);
  const previousPort = previous ? Number(new URL(previous.url).port) || 0 : 0;
  const explicit = o.port ?? engine.settings.apiPort;
  const port = explicit ?? previousPort;
  const token = o.token ?? readApiFile(engine.dataDir)?.token ?? newToken();
  const app = Fastify({
    logger: false,
    bodyLimit: o.bodyLimit ?? 1024 * 1024,
    return503OnClosing: true,
    // Errors the router raises before any route (a URL that is not valid percent-encoding) answer
    // in the same {ok: false, error} shape as everything else.
    frameworkErrors: (err, _req, reply) => sendError(reply, err.statusCode ?? 400, { code: 'BAD_REQUEST', message: err.message }),
    // No route declares a JSON schema (zod checks every input): Fastify's Ajv validator and
    // serializer compilers (some 100 modules, ~6 MiB) are built only if one ever does.
    schemaController: { compilersFactory: { buildValidator: lazyCompiler<'buildValidator'>('@fastify/ajv-compiler'), buildSerializer: lazyCompiler<'buildSerializer'>('@fastify/fast-json-stringify-compiler') } },
  });
  const routes: ApiServer['routes'] = [];
  const streams = new Streams();
  app.decorateRequest('principal', null);
  // End event streams and log follows first: closing waits for open responses.
  app.addHook('preClose', async () => streams.closeAll());
  // A write through the API reaches open event streams at once.
  app.addHook('onResponse', async (req) => {
    if (req.method !== 'GET' && streams.size) streams.changed();
  });

  app.addHook('onRoute', (r) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const m of methods) if (m !== 'HEAD') routes.push({ method: m, url: r.url, scope: (r.config as { scope?: Scope } | undefined)?.scope ?? 'admin' });
  });

  // Every route needs a token unless it says `scope: 'public'`; a route that forgets to say
  // anything is admin-only.
  app.addHook('onRequest', async (req, reply) => {
    const scope: Scope = req.routeOptions.config?.scope ?? 'admin';
    if (scope === 'public' || !req.routeOptions.url) return;
    const who = authenticate(engine.store, token, req.headers.authorization);
    if (!who) return sendError(reply, 401, { code: 'UNAUTHORIZED', message: 'missing or wrong bearer token' });
    if (who.kind === 'worker' && scope !== 'worker') return sendError(reply, 403, { code: 'FORBIDDEN', message: `a worker token (${who.computer}) cannot call this route` });
    req.principal = who;
  });

  app.setErrorHandler((raw, _req, reply) => {
    const err = raw as Error & { statusCode?: number };
    if (err instanceof TendError) return sendError(reply, STATUS[err.code] ?? 400, toResultError(err));
    const status = err.statusCode;
    if (status && status >= 400 && status < 500) return sendError(reply, status, { code: 'BAD_REQUEST', message: err.message });
    // A path parameter whose percent-encoding is not UTF-8 (e.g. %ED%A0%80): the client's fault.
    if (err instanceof URIError) return sendError(reply, 400, { code: 'BAD_REQUEST', message: `malformed URL encoding: ${err.message}` });
    engine.log({ type: 'api:fault', message: err.message });
    return sendError(reply, 500, { code: 'INTERNAL', message: err.message });
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, { code: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}` }));

  // The channels' schemas and implementations (zod, the ops) load with the first call of one.
  const contract = onFirstCall(async (): Promise<{ methods: Methods; dispatch: typeof import('./methods.js').dispatch }> => {
    const m = await import('./methods.js');
    return { methods: m.makeMethods(engine), dispatch: m.dispatch };
  });
  for (const [channel, spec] of Object.entries(ROUTES) as [Channel, RouteSpec][]) {
    app.route({
      method: spec.method,
      url: spec.path,
      config: { scope: spec.scope },
      handler: async (req) => {
        const input = { ...(req.query as object), ...(req.body as object | null), ...(req.params as object) };
        // No body is fine; a body that is JSON `null`, a list or a scalar is not (never "no arguments").
        if (req.body !== undefined && (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body))) {
          throw new TendError('INVALID', 'the body must be a JSON object', [{ path: '', message: 'expected a JSON object' }]);
        }
        const { methods, dispatch } = await contract();
        return { ok: true, value: await dispatch(methods, channel, input) };
      },
    });
  }

  const extra = (k: keyof typeof EXTRA_ROUTES) => ({ method: EXTRA_ROUTES[k].method, url: EXTRA_ROUTES[k].path, config: { scope: EXTRA_ROUTES[k].scope } });
  app.route({ ...extra('health'), handler: async () => ({ ok: true, value: { status: 'ok', pid: process.pid } }) });
  app.route({ ...extra('openapi'), handler: async () => (await import('./openapi.js')).openApiDocument(routes) });
  app.route({ ...extra('events'), handler: (req, reply) => eventStream(engine, streams, req, reply) });
  app.route({ ...extra('follow'), handler: async (req, reply) => (await import('./follow.js')).followRoute(engine, streams, req, reply) });

  const ctx: ApiContext = { engine, principal: (req) => req.principal };
  poolRoutes(app, ctx);
  metricsRoute(app, ctx, o.metricsPublic ?? engine.settings.metricsPublic);
  webhookRoutes(app, ctx);
  if (o.rendererDir) serveRenderer(app, o.rendererDir);

  try {
    await app.listen({ host, port });
  } catch (err) {
    // The old port is taken by something else now: any free port will do (an explicit one must not move).
    if (explicit !== null || port === 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    await app.listen({ host, port: 0 });
  }
  const addr = app.server.address();
  const actualPort = typeof addr === 'object' && addr ? addr.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  writeApiFile(engine.dataDir, { url, token, pid: process.pid });
  return { app, url, token, routes, close: () => app.close() };
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** One of Fastify's compiler factories, required from Fastify's own dependencies on first use. */
function lazyCompiler<K extends keyof CompilersFactory>(name: string): NonNullable<CompilersFactory[K]> {
  let build: ((...args: unknown[]) => unknown) | null = null;
  const factory = (...args: unknown[]) => {
    build ??= (createRequire(createRequire(import.meta.url).resolve('fastify'))(name) as () => (...a: unknown[]) => unknown)();
    return build(...args);
  };
  return factory as NonNullable<CompilersFactory[K]>;
}

function sendError(reply: FastifyReply, status: number, error: { code: string; message: string; issues?: unknown }) {
  return reply.code(status).send({ ok: false, error });
}

/**
 * Server-sent events: `event` rows as they are appended, read from the events table (the one
 * source: rows written by the pass, by API calls and by other processes such as the CLI alike).
 * `?after=ID` (or `Last-Event-ID`) replays what was missed.
 */
async function eventStream(engine: Engine, streams: Streams, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { parseEventsQuery } = await import('./events-query.js');
  const q = parseEventsQuery({ ...(req.query as object), ...(req.headers['last-event-id'] !== undefined && (req.query as { after?: unknown }).after === undefined ? { after: req.headers['last-event-id'] } : {}) });
  let lastId: number;
  if (q.after !== undefined) {
    lastId = Number(q.after);
  } else {
    lastId = (engine.store.db.prepare(`SELECT COALESCE(MAX(id), 0) AS id FROM events`).get() as { id: number }).id;
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  let closed = false;
  const drain = () => {
    if (closed) return;
    try {
      for (;;) {
        const rows = engine.store.events.after(lastId, 500);
        for (const e of rows) res.write(`id: ${e.id}\nevent: event\ndata: ${JSON.stringify(e)}\n\n`);
        if (rows.length) lastId = rows[rows.length - 1]!.id;
        if (rows.length < 500) break;
      }
    } catch {
      /* the store is closing: the stream ends with the server */
    }
  };
  let scheduled = false;
  const soon = () => {
    if (scheduled || closed) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      drain();
    });
  };
  drain();
  res.write(': connected\n\n');
  const onPass = (p: unknown) => {
    drain();
    if (!closed) res.write(`event: pass\ndata: ${JSON.stringify(p)}\n\n`);
  };
  engine.bus.on('event', soon);
  engine.bus.on('pass', onPass);
  // Rows written by other processes (the CLI) are seen within a second even between passes.
  const poll = setInterval(drain, 1000);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  const unregister = streams.add(() => {
    if (!res.writableEnded) res.end();
    end();
  }, soon);
  req.raw.on('close', end);
  res.on('close', end);
  await ended;
  closed = true;
  unregister();
  clearInterval(poll);
  clearInterval(keepAlive);
  engine.bus.off('event', soon);
  engine.bus.off('pass', onPass);
}
