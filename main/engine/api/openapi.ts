// The OpenAPI document, generated from the same route tables, input schemas and result schemas
// the server uses: contract routes (contract/routes.ts + methods.ts INPUTS + responses.ts RESULTS), the
// streams and documents beside them, and the plugin routes (worker pool, webhooks, metrics).
import { z } from 'zod';
import { FollowQuery } from './follow.js';
import { INPUTS } from './methods.js';
import { FrameworkBody, ErrorEnvelope, HealthSchema, ok, RESULTS } from './responses.js';
import type { RouteDoc } from './route-doc.js';
import { EXTRA_ROUTES, ROUTES, type Channel, type RouteSpec } from '../../../contract/routes.js';
import { EventsQuery } from './events-query.js';
import { METRICS_ROUTE } from '../metrics/route.js';
import { POOL_ROUTES } from '../pool/routes.js';
import { WEBHOOK_ROUTES } from '../webhooks/routes.js';
import { tendVersion } from '../version.js';

type Json = Record<string, unknown>;
type ObjectSchema = { properties?: Record<string, Json>; required?: string[]; additionalProperties?: unknown };

const toOpenApiPath = (p: string) => p.replace(/:(\w+)/g, '{$1}');
const pathNames = (p: string) => [...p.matchAll(/:(\w+)/g)].map((m) => m[1]!);

/** JSON Schema (2020-12, which OpenAPI 3.1 uses) of what a client sends or receives. */
function schema(s: z.ZodType): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  return rest;
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ERROR_REF } } });

const STREAM_EVENTS = {
  events: 'Server-sent events: `event: event` with an event row as `data` (JSON, as in `GET /api/events/recent`; `id:` its id), `event: pass` after each scheduler pass; comments keep the connection alive.',
  follow: 'Server-sent events: `event: chunk` with the output written (a JSON string) as `data`, then `event: end` with `{"reason": …}` when the run is over.',
};

/** Routes beside the contract: liveness, the two event streams and this document. */
const EXTRA_DOCS: Record<keyof typeof EXTRA_ROUTES, Omit<RouteDoc, keyof RouteSpec>> = {
  health: { result: HealthSchema },
  events: { query: EventsQuery, raw: { type: 'text/event-stream', schema: { type: 'string' }, description: STREAM_EVENTS.events } },
  follow: { params: z.object({ id: INPUTS['runs.show'].shape.id }), query: FollowQuery, raw: { type: 'text/event-stream', schema: { type: 'string' }, description: STREAM_EVENTS.follow } },
  openapi: {
    raw: {
      type: 'application/json',
      schema: { type: 'object', properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } }, required: ['openapi', 'info', 'paths'] },
      description: 'This document (OpenAPI 3.1)',
    },
  },
};

/** A contract route's doc: its one input schema split into path, query or body as the route takes it. */
function contractDoc(channel: Channel): RouteDoc & { input: Json } {
  return { ...ROUTES[channel], input: schema(INPUTS[channel]), result: RESULTS[channel] };
}

function operation(doc: RouteDoc & { input?: Json }, operationId: string): Json {
  const names = pathNames(doc.path);
  const input = (doc.input ?? {}) as ObjectSchema;
  const params = (doc.params ? schema(doc.params) : input) as ObjectSchema;
  const parameters: Json[] = names.map((name) => ({ name, in: 'path', required: true, schema: params.properties?.[name] ?? { type: 'string' } }));
  // What the input holds besides its path parameters: the query of a GET/DELETE, else the body.
  const restOf = (s: ObjectSchema): ObjectSchema => {
    const properties = Object.fromEntries(Object.entries(s.properties ?? {}).filter(([k]) => !names.includes(k)));
    const required = (s.required ?? []).filter((k) => !names.includes(k));
    return { ...s, properties, ...(required.length ? { required } : { required: undefined }) };
  };
  const readsQuery = doc.method === 'GET' || doc.method === 'DELETE';
  const query = doc.query ? (schema(doc.query) as ObjectSchema) : doc.input && readsQuery ? restOf(input) : null;
  for (const [name, s] of Object.entries(query?.properties ?? {})) parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema: s });
  let requestBody: Json | undefined;
  const body = doc.body ? restOf(schema(doc.body) as ObjectSchema) : doc.input && !readsQuery ? restOf(input) : null;
  if (body && Object.keys(body.properties ?? {}).length > 0) {
    const { required, ...rest } = body;
    requestBody = { required: !doc.bodyOptional && !!required?.length, content: { 'application/json': { schema: required ? { ...rest, required } : rest } } };
  }

  const success = doc.raw
    ? { description: doc.raw.description, content: { [doc.raw.type]: { schema: doc.raw.schema } } }
    : { description: 'ok: `{ok: true, value}`', content: { 'application/json': { schema: schema(ok(doc.result ?? z.unknown())) } } };
  const takesBody = doc.method !== 'GET';
  const responses: Json = {
    '200': success,
    '400': errorResponse('invalid input (`issues` name each field and why), malformed JSON or URL encoding'),
    ...(doc.scope === 'public' ? {} : { '401': errorResponse('missing or wrong bearer token'), '403': errorResponse('a worker token on an admin route, or on another computer') }),
    ...(names.length ? { '404': errorResponse('no such id') } : {}),
    ...(takesBody ? { '409': errorResponse('the current state refuses it (CONFLICT, REFUSED): the message says why') } : {}),
    ...(takesBody ? { '413': errorResponse('the body is over the server’s limit (1 MiB by default)'), '415': errorResponse('a body of a media type the server does not parse (it takes `application/json`)') } : {}),
    '431': { description: 'request headers over Node’s limit: answered before routing, in fastify’s own shape', content: { 'application/json': { schema: schema(FrameworkBody) } } },
    '500': errorResponse('a fault of the server (logged as api:fault)'),
    '503': {
      description: 'the daemon is stopping (fastify’s own body), or what the call needs is unavailable (UNAVAILABLE)',
      content: { 'application/json': { schema: { oneOf: [ERROR_REF, schema(FrameworkBody)] } } },
    },
  };
  return {
    operationId,
    summary: doc.summary,
    security: doc.scope === 'public' ? [] : [{ bearer: [] }],
    'x-scope': doc.scope,
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

const operationIdOf = (method: string, url: string) => `${method.toLowerCase()}${url.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;

/**
 * `registered`: the routes the router holds (server.routes), whose scope wins (metrics may be made
 * public at start). A registered route no table describes is still listed, so the document never
 * omits a route; the renderer's catch-all page is not part of the API.
 */
export function openApiDocument(registered: { method: string; url: string; scope: RouteSpec['scope'] }[] = []): Json {
  const paths: Record<string, Record<string, unknown>> = {};
  const scopeOf = (d: RouteDoc) => registered.find((r) => r.method === d.method && r.url === d.path)?.scope ?? d.scope;
  const add = (doc: RouteDoc & { input?: Json }, operationId: string) => {
    (paths[toOpenApiPath(doc.path)] ??= {})[doc.method.toLowerCase()] = operation({ ...doc, scope: scopeOf(doc) }, operationId);
  };
  for (const channel of Object.keys(ROUTES) as Channel[]) add(contractDoc(channel), channel);
  for (const [name, spec] of Object.entries(EXTRA_ROUTES) as [keyof typeof EXTRA_ROUTES, RouteSpec][]) add({ ...spec, ...EXTRA_DOCS[name] }, name);
  for (const doc of [...POOL_ROUTES, ...WEBHOOK_ROUTES, METRICS_ROUTE]) add(doc, operationIdOf(doc.method, doc.path));
  for (const r of registered) {
    if (r.url.includes('*') || paths[toOpenApiPath(r.url)]?.[r.method.toLowerCase()]) continue;
    add({ method: r.method as RouteSpec['method'], path: r.url, scope: r.scope, summary: `${r.method} ${r.url}` }, operationIdOf(r.method, r.url));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tend API',
      version: tendVersion(),
      description: 'Every capability of the Tend daemon. Authorization: Bearer <token from api.json>.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // Relative: the document is served by the daemon it describes, at the address in api.json.
    servers: [{ url: '/', description: 'the daemon serving this document' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: schema(ErrorEnvelope) },
    },
    paths,
  };
}
