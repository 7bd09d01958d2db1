// What "a worker is online" means, once, for everything that asks: the scheduler (a stage pauses,
// claims of an away worker wait), forgetting a worker, the metrics, MCP, the API and the Workers page.
import { envMs } from '../store/workers.js';

/** A worker not heard from for longer than this is offline (TEND_WORKER_OFFLINE_MS, default 30 s). */
export const WORKER_OFFLINE_MS = envMs('TEND_WORKER_OFFLINE_MS', 30_000);

export function workerOnline(lastSeen: number | null, now: number): boolean {
  return lastSeen !== null && now - lastSeen <= WORKER_OFFLINE_MS;
}
