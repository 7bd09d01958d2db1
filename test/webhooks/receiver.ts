// A webhook receiver on 127.0.0.1: records every request, answers with a status chosen per
// request, and can go down (close its port) and come back on the same port.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../helpers/wait.js';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  status: number;
}

export class Receiver {
  readonly requests: Received[] = [];
  /** Status to answer each request with (default 200). */
  respond: (r: Omit<Received, 'status'>) => number = () => 200;
  private server: Server | null = null;
  port = 0;

  async start(port = this.port): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const r = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body };
        const status = this.respond(r);
        this.requests.push({ ...r, status });
        res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end('ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Close the port (connections refused) and wait until it is closed. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Requests answered 2xx. */
  delivered(): Received[] {
    return this.requests.filter((r) => r.status >= 200 && r.status < 300);
  }

  async until(pred: (rs: Received[]) => boolean, timeoutMs = 10_000, what = 'the receiver to get the expected requests'): Promise<Received[]> {
    await waitFor(() => pred(this.requests), timeoutMs, `${what} (got ${JSON.stringify(this.requests.map((r) => `${r.status} ${r.body?.event} ${r.body?.routine?.id}`))})`);
    return this.requests;
  }
}

/** A port nothing listens on (taken, then released). */
export async function freePort(): Promise<number> {
  const r = await new Receiver().start(0);
  const port = r.port;
  await r.stop();
  return port;
}
