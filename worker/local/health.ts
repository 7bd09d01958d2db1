// Is the local backend usable: enough free disk for job directories and logs, and a runs dir
// this process can write to.
import { spawnSync } from 'node:child_process';
import { mkdir, statfs, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Health } from '../../main/engine/backend.js';
import { errorMessage } from '../../main/engine/errors.js';
import { findBash } from './submit.js';

export const DEFAULT_MIN_FREE_BYTES = 100 * 1024 * 1024;

/** Programs the wrapper needs (stdbuf is optional: without it logs appear in 4 KiB steps). */
const WRAPPER_TOOLS = ['setsid', 'head', 'mkfifo', 'wc', 'mv', 'rm', 'sleep'];
let toolsChecked = false;

/** Null when bash and the wrapper's tools are all present (checked once per process). */
export function missingWrapperTools(): string | null {
  if (toolsChecked) return null;
  const bash = findBash();
  if (!bash) return 'bash not found';
  const script = `PATH="\${PATH:+$PATH:}/usr/local/bin:/usr/bin:/bin"; for t in ${WRAPPER_TOOLS.join(' ')}; do command -v "$t" > /dev/null || printf '%s ' "$t"; done`;
  const r = spawnSync(bash, ['-c', script], { encoding: 'utf8', timeout: 10_000 });
  if (r.error) return `cannot run ${bash}: ${r.error.message}`;
  const missing = r.stdout.trim();
  if (missing) return `programs the job wrapper needs are missing: ${missing}`;
  toolsChecked = true;
  return null;
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(0)} MiB`;
}

export async function localHealth(dataDir: string, minFreeBytes = DEFAULT_MIN_FREE_BYTES): Promise<Health> {
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
  const tools = missingWrapperTools();
  if (tools) return { ok: false, reason: tools };
  const probe = join(runsDir, `.health-${process.pid}-${Date.now()}`);
  try {
    await writeFile(probe, 'ok\n', { mode: 0o600 });
    await unlink(probe);
  } catch (err) {
    return { ok: false, reason: `${runsDir} is not writable: ${errorMessage(err)}` };
  }
  return { ok: true, reason: null };
}
