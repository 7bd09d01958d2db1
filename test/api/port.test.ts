// A restarted daemon keeps its API address, so remote workers and open browser tabs find it again;
// when that port has been taken meanwhile, it takes another rather than failing to start.
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startApi } from '../../main/engine/api/server.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function once(dataDir: string) {
  const engine = buildEngine({ dataDir });
  const api = await startApi(engine, { rendererDir: null });
  const url = api.url;
  await api.close();
  engine.store.close();
  return url;
}

describe('API address across restarts', () => {
  it('reuses the port recorded in api.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tend-port-'));
    dirs.push(dir);
    const first = await once(dir);
    const second = await once(dir);
    expect(second).toBe(first);
    expect(JSON.parse(readFileSync(join(dir, 'api.json'), 'utf8')).url).toBe(first);
  });

  it('moves to a free port when the old one is taken', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tend-port-'));
    dirs.push(dir);
    const first = await once(dir);
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(Number(new URL(first).port), '127.0.0.1', () => r()));
    try {
      const second = await once(dir);
      expect(second).not.toBe(first);
      expect(new URL(second).port).not.toBe('0');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});
