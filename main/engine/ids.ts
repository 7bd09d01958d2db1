import { randomBytes } from 'node:crypto';

/** Sortable, unique run ids: time first so directory listings and SQL order agree. */
export function newRunId(now: number): string {
  return `${now.toString(36).padStart(9, '0')}-${randomBytes(4).toString('hex')}`;
}

/** The UTC day of an instant, as used for `runs/<day>/`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
