// The worker reads the daemon's answers with the protocol's schemas (contract/worker-protocol.ts):
// a command it cannot read is skipped and said, and the commands fetched with it still run
// (fetched commands are gone from the daemon, so a whole batch must not be lost to one).
// A real worker agent, a real job process, and a real HTTP server standing in for the daemon.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorkerReport } from '../../contract/worker-protocol.js';
import { WorkerAgent } from '../../worker/remote/agent.js';
import { scratch, waitFor } from './harness.js';

const body = async (req: IncomingMessage): Promise<unknown> => {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? JSON.parse(text) : null;
};

let server: Server | null = null;
let box: ReturnType<typeof scratch> | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(null)));
  box?.remove();
});

describe('the worker reads answers with the protocol', () => {
  it('skips a command it cannot read, naming it, and runs the one fetched with it', async () => {
    box = scratch('tend-protocol-');
    const spec = {
      runId: 'r-good',
      kind: 'run',
      routineId: 'me@wa:ok',
      jobId: null,
      attempt: 1,
      command: 'sh',
      args: ['-c', 'echo fine'],
      cwd: null,
      env: {},
      scheduledAt: Date.now(),
      runDir: '/elsewhere/on/the/daemon',
      logCapBytes: 1_000_000,
      outputs: [],
      revision: null,
      maskedArgs: ['-c', 'echo fine'],
    };
    let served = false;
    const reports: WorkerReport[] = [];
    server = createServer((req, res) => {
      void (async () => {
        const answer = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, value }));
        if (req.url?.startsWith('/api/worker/commands')) {
          const commands = served ? [] : [{ id: 1, kind: 'start', payload: { spec: { runId: 5 } }, expiresAt: Date.now() + 60_000 }, { id: 2, kind: 'start', payload: { spec }, expiresAt: Date.now() + 60_000 }];
          served = true;
          if (commands.length === 0) await new Promise((r) => setTimeout(r, 100));
          return answer({ commands });
        }
        if (req.url === '/api/worker/reports') {
          const b = (await body(req)) as { reports: WorkerReport[] };
          reports.push(...b.reports);
          return answer({ accepted: b.reports.length, refused: [] });
        }
        res.writeHead(404).end(JSON.stringify({ ok: false, error: { code: 'NOT_FOUND', message: `no route ${req.url}` } }));
      })();
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let log = '';
    const agent = new WorkerAgent({ server: url, token: 't', computer: 'me@wa', batchSlots: 0, dataDir: box.dir, version: 'test', waitMs: 100, log: (l) => (log += `${l}\n`) });
    const running = agent.run();
    try {
      const done = await waitFor(() => reports.find((r) => r.id === 'r-good' && r.state === 'done'), 20_000, `the good command's run to be reported done (log: ${log})`);
      expect(done).toMatchObject({ kind: 'run', exitCode: 0 });
      expect(log).toMatch(/skipped a command this worker cannot read \(id 1, kind start\): payload\.spec\.runId: /);
      expect(log).not.toMatch(/retrying/);
    } finally {
      agent.shutdown();
      await running;
    }
  });
});
