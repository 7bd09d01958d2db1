// Is the local backend usable: enough free disk (bytes and inodes) for job directories and logs,
// and a runs dir this process may write to.
import { access as accessCb, constants, mkdir as mkdirCb, statfs as statfsCb } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Health } from '../../main/engine/backend.js';
import { errorMessage } from '../../main/engine/errors.js';
import { missingTools, type WaiterTools } from './tools.js';

// fs's callbacks, not node:fs/promises: that module (with the readline modules it loads) would be
// resident in every daemon for these few calls.
const access = promisify(accessCb);
const mkdir = promisify(mkdirCb);
const statfs = promisify(statfsCb);

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
    // A file system with a fixed number of inodes (btrfs has none: both 0) can run out of them with bytes to spare.
    if (fs.files > 0 && fs.ffree === 0) return { ok: false, reason: `no free inodes in ${dataDir}: no job directory can be made` };
  } catch (err) {
    return { ok: false, reason: `cannot read free space of ${dataDir}: ${errorMessage(err)}` };
  }
  const missing = missingTools(tools);
  if (missing) return { ok: false, reason: missing };
  // Asked, not tried: a probe file written and removed here raced whatever removes the data dir
  // after its engine stopped (a probe may still run behind the last answer), and cost a file's
  // creation every second while jobs flow. access(2) says EROFS for a read-only mount too.
  try {
    await access(runsDir, constants.W_OK);
  } catch (err) {
    return { ok: false, reason: `${runsDir} is not writable: ${errorMessage(err)}` };
  }
  return { ok: true, reason: null };
}
