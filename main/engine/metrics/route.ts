// GET /metrics: the Prometheus text format. Needs the admin token (Prometheus: `authorization:
// {credentials_file: …}`) unless TEND_METRICS_PUBLIC=1 when the server starts.
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../api/server.js';
import type { Scope } from '../../../contract/routes.js';
import type { RouteDoc } from '../api/route-doc.js';
import { collectMetrics, PassStats } from './collect.js';
import { CONTENT_TYPE } from './prom.js';

/** The scope here is the default; the document takes the one the router holds (TEND_METRICS_PUBLIC). */
export const METRICS_ROUTE: RouteDoc = {
  method: 'GET',
  path: '/metrics',
  scope: 'admin',
  summary: 'Prometheus metrics (text exposition format); public with TEND_METRICS_PUBLIC=1',
  raw: { type: CONTENT_TYPE.split(';')[0]!, schema: { type: 'string' }, description: `Prometheus text format (\`${CONTENT_TYPE}\`)` },
};

/** `isPublic`: Settings.metricsPublic (TEND_METRICS_PUBLIC) of the server's start. */
export function metricsRoute(app: FastifyInstance, ctx: ApiContext, isPublic: boolean): void {
  const { engine } = ctx;
  const stats = new PassStats();
  engine.bus.on('pass', stats.observe);
  app.addHook('onClose', async () => {
    engine.bus.off('pass', stats.observe);
  });
  const scope: Scope = isPublic ? 'public' : 'admin';
  app.route({
    method: 'GET',
    url: '/metrics',
    config: { scope },
    handler: async (_req, reply) => reply.type(CONTENT_TYPE).send(collectMetrics(engine.store, engine.clock.now(), stats, engine.settings.workerOfflineMs)),
  });
}
