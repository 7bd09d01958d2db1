// The OpenAPI document, generated from the same route table and input schemas the server uses.
import { z } from 'zod';
import { INPUTS } from './methods.js';
import { EXTRA_ROUTES, ROUTES, type Channel, type RouteSpec } from './routes.js';
import { tendVersion } from '../version.js';

const toOpenApiPath = (p: string) => p.replace(/:(\w+)/g, '{$1}');

export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (spec: RouteSpec, operationId: string, input: z.ZodType | null) => {
    const params = [...spec.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const op: Record<string, unknown> = {
      operationId,
      summary: spec.summary,
      security: spec.scope === 'public' ? [] : [{ bearer: [] }],
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
  return {
    openapi: '3.1.0',
    info: { title: 'Tend API', version: tendVersion(), description: 'Every capability of the Tend daemon. Authorization: Bearer <token from api.json>.' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
