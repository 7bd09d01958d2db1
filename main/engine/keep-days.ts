// How long finished history is kept (Settings.keepDays, TEND_KEEP_DAYS), by the daemon, the app and workers.
export const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_KEEP_DAYS = 30;
