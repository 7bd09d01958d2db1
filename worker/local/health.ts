// Is the local backend usable: enough free disk for job directories and logs, and a runs dir
// this process can write to.
import { mkdir, statfs, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Health } from '../../main/engine/backend.js';
import { errorMessage } from '../../main/engine/errors.js';
import { missingTools, type WaiterTools } from './tools.js';

export const DEFAULT_MIN_FREE_BYTES = 100 * 1024 * 1024;

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(0)} MiB`;
}

export async function localHealth(dataDir: string, minFreeBytes = DEFAULT_MIN_FREE_BYTES, tools: WaiterTools = {}): Promise<Health> {
  const runsDir = join(dataDir, 'runs');
  try {
    await mkdir(runsDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    return { ok: false, reason: `cannot create ${runsDir}: ${errorMessage(err)}` };
  }
  try {
    const fs = await statfs(runsDir);
    const free = fs.bavail * fs.bsize;
    if (free < minFreeBytes) return { ok: false, reason: `only ${mib(free)} free in ${dataDir} (below ${mib(minFreeBytes)})` };
  } catch (err) {
    return { ok: false, reason: `cannot read free space of ${dataDir}: ${errorMessage(err)}` };
  }
  const missing = missingTools(tools);
  if (missing) return { ok: false, reason: missing };
  const probe = join(runsDir, `.health-${process.pid}-${Date.now()}`);
  try {
    await writeFile(probe, 'ok\n', { mode: 0o600 });
    await unlink(probe);
  } catch (err) {
    return { ok: false, reason: `${runsDir} is not writable: ${errorMessage(err)}` };
  }
  return { ok: true, reason: null };
}
