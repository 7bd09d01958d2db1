// The OpenAPI document, generated from the same route table and input schemas the server uses.
import { z } from 'zod';
import { INPUTS } from './methods.js';
import { EXTRA_ROUTES, ROUTES, type Channel, type RouteSpec } from './routes.js';
import { tendVersion } from '../version.js';

const toOpenApiPath = (p: string) => p.replace(/:(\w+)/g, '{$1}');

/**
 * `registered`: the routes the router holds (server.routes). Those outside the two tables (the
 * worker pool's, registered by their own module) are documented too, with their scope, so the
 * document never omits a route; the renderer's catch-all page is not part of the API.
 */
export function openApiDocument(registered: { method: string; url: string; scope: RouteSpec['scope'] }[] = []): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (spec: RouteSpec, operationId: string, input: z.ZodType | null) => {
    const params = [...spec.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const op: Record<string, unknown> = {
      operationId,
      summary: spec.summary,
      security: spec.scope === 'public' ? [] : [{ bearer: [] }],
      'x-scope': spec.scope,
      parameters: params,
      responses: {
        '200': { description: 'ok: `{ok: true, value}`' },
        '400': { description: 'invalid input: `{ok: false, error: {code, message, issues: [{path, message}]}}`' },
        ...(spec.scope === 'public' ? {} : { '401': { description: 'missing or wrong token' }, '403': { description: 'token outside its scope' } }),
        '404': { description: 'unknown id' },
      },
    };
    if (input) {
      const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' });
      if (spec.method === 'GET' || spec.method === 'DELETE') op['x-query'] = schema;
      else op.requestBody = { required: true, content: { 'application/json': { schema } } };
    }
    (paths[toOpenApiPath(spec.path)] ??= {})[spec.method.toLowerCase()] = op;
  };
  for (const [channel, spec] of Object.entries(ROUTES) as [Channel, RouteSpec][]) add(spec, channel, INPUTS[channel]);
  for (const [name, spec] of Object.entries(EXTRA_ROUTES) as [string, RouteSpec][]) add(spec, name, null);
  for (const r of registered) {
    if (r.url.includes('*') || paths[toOpenApiPath(r.url)]?.[r.method.toLowerCase()]) continue;
    const spec: RouteSpec = { method: r.method as RouteSpec['method'], path: r.url, scope: r.scope, summary: `${r.method} ${r.url}` };
    add(spec, `${r.method.toLowerCase()}${r.url.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`, null);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tend API', version: tendVersion(), description: 'Every capability of the Tend daemon. Authorization: Bearer <token from api.json>.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
