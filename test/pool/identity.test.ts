// A worker is bound to its identity: every request names its computer, a token used for another
// computer is refused (403) on every worker route and the worker exits saying whose token it is;
// a wrong token or an unreachable server is said at once, never a silent hang.
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, freePort, http, killTracked, Pool, scratch, waitFor, Worker } from './harness.js';

let box: ReturnType<typeof scratch>;
let pool: Pool | null = null;
const extra: Worker[] = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const w of extra.splice(0)) await w.kill('SIGKILL');
  await pool?.stopAll();
  pool = null;
  await killTracked();
  box?.remove();
});

describe('a worker token is bound to its computer', () => {
  it("bob's token used as alice@other: 403 on every worker route, and the worker exits naming bob@gpu", async () => {
    box = scratch('tend-identity-');
    pool = await Pool.start(box.dir);
    pool.tendOk('routine', 'add', 'bob@gpu:train', '--realtime', '--', 'sleep', '300');
    const bob = pool.token('bob@gpu');

    const routes: [string, string, unknown][] = [
      ['GET', '/api/worker/commands?computer=alice@other', undefined],
      ['POST', '/api/worker/jobs/claim', { computer: 'alice@other', slots: 1 }],
      ['POST', '/api/worker/reports', { computer: 'alice@other', reports: [] }],
      ['POST', `/api/external/${encodeURIComponent('bob@gpu:train')}/heartbeat`, { computer: 'alice@other' }],
    ];
    for (const [method, path, body] of routes) {
      const r = await pool.http(method, path, body, bob);
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error?.message).toContain('this token belongs to bob@gpu, not alice@other');
    }
    // Naming no computer at all is refused too (400, naming the field): nothing is taken for granted.
    const unnamed = await http(pool.api.url, bob, 'GET', '/api/worker/commands');
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error?.message).toMatch(/^computer: required/);

    const w = new Worker('alice@other', join(box.dir, 'worker-alice'), () => pool!.api.url, bob, 1);
    extra.push(w);
    w.start();
    const exit = await w.exited;
    expect(exit.code, w.log).toBe(1);
    expect(w.log).toContain('refused: this token belongs to bob@gpu, not alice@other');
    expect(w.log).toContain('start the worker with --computer bob@gpu');
    expect(w.log).not.toContain('connected');
    // It fetched nothing of bob's: his start commands are still waiting for him.
    expect(pool.db.commands('bob@gpu').every((c) => c.fetched_at === null)).toBe(true);
  });

  it('a wrong token: said at once, retried a bounded number of times with the reason, then the worker exits', async () => {
    box = scratch('tend-identity-');
    pool = await Pool.start(box.dir);
    const w = new Worker('alice@other', join(box.dir, 'worker-alice'), () => pool!.api.url, 'w_not-a-token', 0);
    extra.push(w);
    w.start();
    await waitFor(() => w.log.includes('the server refused the token'), 10_000, 'the refusal to be said');
    expect(w.log).toContain('(try 1 of 5; next in 0.5 s)');
    expect(w.log).toContain('tend worker token alice@other');
    const exit = await w.exited;
    expect(exit.code, w.log).toBe(1);
    expect(w.log).toContain('Gave up after 5 tries');
    for (const n of [2, 3, 4]) expect(w.log).toContain(`try ${n} of 5`);
  });

  it('an unreachable server: the reason at once, then retries that keep saying it', async () => {
    box = scratch('tend-identity-');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const w = new Worker('alice@other', join(box.dir, 'worker-alice'), () => url, 'w_whatever', 0);
    extra.push(w);
    w.start();
    await waitFor(() => /no answer from .* \(ECONNREFUSED\).*; retrying in 0\.5 s/.test(w.log), 10_000, 'the first failure to be said');
    expect(w.log).toContain(`GET /api/worker/commands: no answer from ${url} (ECONNREFUSED)`);
    await waitFor(() => w.log.includes('retrying in 2 s'), 15_000, 'later retries to be said too');
    expect(w.running).toBe(true);
  });
});
