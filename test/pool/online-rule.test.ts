// One meaning of "a worker is online" (heard from within TEND_WORKER_OFFLINE_MS, 30 s): the
// scheduler's pool backend, the metrics, MCP and the API all say the same of a worker last seen
// 20 s ago (online) and of one last seen 60 s ago (offline; the metrics used to count it for 90 s).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../main/engine/clock.js';
import { WORKER_OFFLINE_MS } from '../../main/engine/domain/online.js';
import { workers as mcpWorkers } from '../../main/engine/mcp/read.js';
import { collectMetrics } from '../../main/engine/metrics/collect.js';
import { createPoolBackend } from '../../main/engine/pool/pool-backend.js';
import { apiSandbox, type ApiSandbox } from '../api/harness.js';

let api: ApiSandbox;
let now: number;
beforeAll(async () => {
  api = await apiSandbox();
  now = Date.now();
  api.engine.store.pool.seen('me@fresh', now - 20_000, { version: '0.1.0', slots: 1, running: 0 });
  api.engine.store.pool.seen('me@gone', now - 60_000, { version: '0.1.0', slots: 1, running: 0 });
});
afterAll(() => api.close());

it('the threshold is 30 s', () => {
  expect(WORKER_OFFLINE_MS).toBe(30_000);
});

it('scheduler (pool backend health), metrics, MCP and GET /api/workers agree', async () => {
  const store = api.engine.store;
  const clock = new ManualClock(now);
  const health = async (c: string) => (await createPoolBackend(c, store, clock, () => undefined).health()).ok;
  expect(await health('me@fresh')).toBe(true);
  expect(await health('me@gone')).toBe(false);

  expect(collectMetrics(store, now, null)).toMatch(/^tend_workers_online 1$/m);

  const m = mcpWorkers(store, now).workers;
  expect(Object.fromEntries(m.map((w) => [w.computer, w.online]))).toEqual({ 'me@fresh': true, 'me@gone': false });

  const r = await api.admin('GET', '/api/workers');
  expect(Object.fromEntries((r.json.value as { computer: string; online: boolean }[]).map((w) => [w.computer, w.online]))).toEqual({ 'me@fresh': true, 'me@gone': false });
});
