// One meaning of "a worker is online" (heard from within Settings.workerOfflineMs, 30 s unless
// TEND_WORKER_OFFLINE_MS says otherwise): the scheduler's pool backend, the metrics, MCP and the
// API all say the same of a worker last seen 20 s ago (online) and of one last seen 60 s ago
// (offline; the metrics used to count it for 90 s), and all follow the threshold they are given.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../main/engine/clock.js';
import { workers as mcpWorkers } from '../../main/engine/mcp/read.js';
import { collectMetrics } from '../../main/engine/metrics/collect.js';
import { createPoolBackend } from '../../main/engine/pool/pool-backend.js';
import { DEFAULT_SETTINGS, settings, type Settings } from '../../main/engine/settings.js';
import { apiSandbox, type ApiSandbox } from '../api/harness.js';

let api: ApiSandbox;
let slow: ApiSandbox;
let now: number;
beforeAll(async () => {
  api = await apiSandbox();
  // The same workers, for an engine started with TEND_WORKER_OFFLINE_MS=90000.
  slow = await apiSandbox({ settings: settings({ workerOfflineMs: 90_000 }) });
  now = Date.now();
  for (const { engine } of [api, slow]) {
    engine.store.pool.seen('me@fresh', now - 20_000, { version: '0.1.0', slots: 1, running: 0 });
    engine.store.pool.seen('me@gone', now - 60_000, { version: '0.1.0', slots: 1, running: 0 });
  }
});
afterAll(async () => {
  await api.close();
  await slow.close();
});

it('the threshold is 30 s', () => {
  expect(DEFAULT_SETTINGS.workerOfflineMs).toBe(30_000);
});

async function verdicts(box: ApiSandbox, s: Settings) {
  const store = box.engine.store;
  const clock = new ManualClock(now);
  const health = async (c: string) => (await createPoolBackend(c, store, clock, () => undefined, s).health()).ok;
  const m = mcpWorkers(store, now, s.workerOfflineMs).workers;
  const r = await box.admin('GET', '/api/workers');
  return {
    pool: { 'me@fresh': await health('me@fresh'), 'me@gone': await health('me@gone') },
    metrics: /^tend_workers_online (\d+)$/m.exec(collectMetrics(store, now, null, s.workerOfflineMs))![1],
    served: /^tend_workers_online (\d+)$/m.exec((await box.admin('GET', '/metrics')).text)![1],
    mcp: Object.fromEntries(m.map((w) => [w.computer, w.online])),
    api: Object.fromEntries((r.json.value as { computer: string; online: boolean }[]).map((w) => [w.computer, w.online])),
  };
}

it('scheduler (pool backend health), metrics, MCP and GET /api/workers agree', async () => {
  const online = { 'me@fresh': true, 'me@gone': false };
  expect(await verdicts(api, DEFAULT_SETTINGS)).toEqual({ pool: online, metrics: '1', served: '1', mcp: online, api: online });
});

it('and all follow the threshold the settings give (the API from its engine)', async () => {
  const both = { 'me@fresh': true, 'me@gone': true };
  expect(await verdicts(slow, slow.engine.settings)).toEqual({ pool: both, metrics: '2', served: '2', mcp: both, api: both });
});
