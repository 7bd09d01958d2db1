// What "a worker is online" means, once, for everything that asks: the scheduler (a stage pauses,
// claims of an away worker wait), forgetting a worker, the metrics, MCP, the API and the Workers page.

/** Heard from within `offlineMs` (Settings.workerOfflineMs: TEND_WORKER_OFFLINE_MS, default 30 s). */
export function workerOnline(lastSeen: number | null, now: number, offlineMs: number): boolean {
  return lastSeen !== null && now - lastSeen <= offlineMs;
}
