// The host hands the local backend how waiters start (TEND_JOB_SHELL, TEND_SPAWNER), read once
// into the settings: the backend reads no environment of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Engine } from '../../../main/engine/engine.js';
import { buildEngine } from '../../../main/engine/host/build-engine.js';
import { settings } from '../../../main/engine/settings.js';

let engine: Engine | null = null;
afterEach(async () => {
  const dir = engine?.dataDir;
  await engine?.close();
  engine = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("a job shell that is not there makes the local backend unhealthy, naming TEND_JOB_SHELL", async () => {
  engine = buildEngine({ dataDir: mkdtempSync(join(tmpdir(), 'tend-local-settings-')), settings: settings({ jobShell: 'no-such-shell --posix' }) });
  expect(await engine.backends.get('local')!.health()).toEqual({ ok: false, reason: 'TEND_JOB_SHELL: no-such-shell not found' });
});
