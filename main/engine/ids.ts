import { randomBytes } from './lazy-crypto.js';

// One call for 4 KiB of randomness instead of one per id: a randomBytes call costs about as much
// as the rest of creating a run. From the kernel's generator while nothing else has loaded
// node:crypto (lazy-crypto.ts): a daemon whose routines fire holds none of its modules for that.
const POOL_BYTES = 4096;
let pool: Buffer = Buffer.alloc(0);
let offset = 0;

/** Sortable, unique run ids: time first so directory listings and SQL order agree. */
export function newRunId(now: number): string {
  if (offset + 4 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const suffix = pool.toString('hex', offset, offset + 4);
  offset += 4;
  return `${now.toString(36).padStart(9, '0')}-${suffix}`;
}

const DAY_MS = 86_400_000;
/** The last day asked for: a pass asks for the same one for every run it starts. */
let last = { from: 0, to: 0, day: '' };

/** The UTC day of an instant, as used for `runs/<day>/`. */
export function utcDay(ms: number): string {
  if (ms >= last.from && ms < last.to) return last.day;
  const from = Math.floor(ms / DAY_MS) * DAY_MS;
  last = { from, to: from + DAY_MS, day: new Date(ms).toISOString().slice(0, 10) };
  return last.day;
}
