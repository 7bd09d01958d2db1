// The host hands the Slurm backend its settings (TEND_SLURM_BIN_DIR, TEND_SLURM_SHARED_FS), read
// once at start: the backend reads no environment of its own. Real engine, real processes: the
// bin dir holds stand-ins for scontrol and sinfo that describe a node on another machine.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Engine } from '../../main/engine/engine.js';
import { buildEngine } from '../../main/engine/host/build-engine.js';
import { settings } from '../../main/engine/settings.js';

let dir: string;
let engine: Engine | null = null;
afterEach(async () => {
  await engine?.close();
  engine = null;
  rmSync(dir, { recursive: true, force: true });
});

function fakeSlurm(): string {
  const bin = join(dir, 'slurm-bin');
  mkdirSync(bin);
  const script = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  script('scontrol', 'echo "Slurmctld(primary) at ctl is UP"');
  script('sinfo', 'echo "node01|10.9.8.7|idle|batch*|up"');
  return bin;
}

async function slurmHealth(s: ReturnType<typeof settings>) {
  engine = buildEngine({ dataDir: join(dir, 'data'), settings: s });
  return engine.backends.get('slurm')!.health();
}

it('runs Slurm commands from the settings’ bin dir', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tend-slurm-settings-'));
  expect(await slurmHealth(settings({ slurmBinDir: join(dir, 'nowhere') }))).toEqual({ ok: false, reason: `scontrol not found in ${join(dir, 'nowhere')} (are Slurm's client commands installed?)` });
});

it('takes the runs dir as shared with the nodes when the settings say so', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tend-slurm-settings-'));
  const bin = fakeSlurm();
  const local = await slurmHealth(settings({ slurmBinDir: bin }));
  expect(local.ok).toBe(false);
  expect(local.reason).toMatch(/Slurm's node node01 cannot see it/);
  await engine!.close();
  expect(await slurmHealth(settings({ slurmBinDir: bin, slurmSharedFs: true }))).toEqual({ ok: true, reason: null });
});
