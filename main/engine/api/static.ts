// Browser mode: the daemon serves the built renderer at its API address.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export function serveRenderer(app: FastifyInstance, root: string): void {
  const send = (file: string) => ({ body: readFileSync(file), type: TYPES[extname(file)] ?? 'application/octet-stream' });
  // The page itself carries no secret; the token comes from the URL fragment, never the server.
  app.route({
    method: 'GET',
    url: '/*',
    config: { scope: 'public' },
    handler: async (req, reply) => {
      const raw = (req.params as { '*': string })['*'] || 'index.html';
      // An API path lands here only when no API route matched it (e.g. a parameter longer than
      // the router's limit): that is a 404 of the API, not the page.
      if (raw === 'api' || raw.startsWith('api/')) return reply.code(404).send({ ok: false, error: { code: 'NOT_FOUND', message: `no route ${req.method} /${raw.split('?')[0]!.slice(0, 200)}` } });
      let path: string;
      try {
        path = decodeURIComponent(raw);
      } catch {
        return reply.code(400).send({ ok: false, error: { code: 'BAD_REQUEST', message: 'malformed URL encoding' } });
      }
      const file = normalize(join(root, path));
      const inside = file.startsWith(root.endsWith(sep) ? root : root + sep);
      const target = inside && existsSync(file) && statSync(file).isFile() ? file : join(root, 'index.html');
      if (!existsSync(target)) return reply.code(404).send({ ok: false, error: { code: 'NOT_FOUND', message: 'the UI is not built (npm run build)' } });
      const { body, type } = send(target);
      return reply.header('content-type', type).header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').send(body);
    },
  });
}
