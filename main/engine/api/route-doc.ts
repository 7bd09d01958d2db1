// How a route describes itself to the OpenAPI document: the schemas it validates its input with
// and the schema of what it answers. Routes registered by plugins (worker pool, webhooks, metrics)
// export one of these beside the handler that uses the same schemas.
import type { z } from 'zod';
import type { HttpMethod, Scope } from '../../../contract/routes.js';

export interface RouteDoc {
  method: HttpMethod;
  path: string;
  scope: Scope;
  summary: string;
  /** Path parameters, validated apart from the rest. */
  params?: z.ZodType;
  /** Query parameters (GET, DELETE). */
  query?: z.ZodType;
  /** A JSON body (POST, PUT); `bodyOptional`: the route also takes none. */
  body?: z.ZodType;
  bodyOptional?: boolean;
  /** The `value` of the `{ok: true, value}` a success answers. */
  result?: z.ZodType;
  /** A success that is not that envelope: its media type and JSON Schema. */
  raw?: { type: string; schema: Record<string, unknown>; description: string };
}
