// A worker host's own job directories. The daemon's retention removes rows and the directories on
// its host; these live here. A directory goes once its day is older than the kept days and this
// worker's ledger no longer holds it (reported and acknowledged); in-flight work is never touched,
// however old (a realtime routine may run for months).
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { utcDay } from '../../main/engine/ids.js';
import { DAY_MS } from '../../main/engine/keep-days.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function pruneRunDirs(dataDir: string, keepDays: number, now: number, inFlight: ReadonlySet<string>): number {
  const root = join(dataDir, 'runs');
  const cutoff = utcDay(now - keepDays * DAY_MS);
  const keep = new Set([...inFlight].map((d) => resolve(d)));
  let removed = 0;
  let days: string[];
  try {
    days = readdirSync(root);
  } catch {
    return 0; // nothing run yet
  }
  for (const day of days) {
    if (!DAY.test(day) || day >= cutoff) continue;
    const dayDir = join(root, day);
    let left = 0;
    for (const entry of readdirSync(dayDir)) {
      const dir = resolve(dayDir, entry);
      if (keep.has(dir)) {
        left++;
        continue;
      }
      rmSync(dir, { recursive: true, force: true });
      removed++;
    }
    if (left === 0) {
      try {
        rmdirSync(dayDir);
      } catch {
        // Written into meanwhile: the next sweep looks again.
      }
    }
  }
  return removed;
}
