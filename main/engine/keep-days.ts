// How long finished history is kept (TEND_KEEP_DAYS), read by the daemon, the app and workers.
export const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_KEEP_DAYS = 30;

/** TEND_KEEP_DAYS: whole days from 1 to 36500, or `forever`; unset means 30. */
export function keepDaysFromEnv(raw: string | undefined): number | null {
  if (raw === undefined || raw.trim() === '') return DEFAULT_KEEP_DAYS;
  if (raw.trim() === 'forever') return null;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > 36_500) throw new Error(`TEND_KEEP_DAYS must be a whole number of days from 1 to 36500, or "forever", got "${raw}"`);
  return n;
}
