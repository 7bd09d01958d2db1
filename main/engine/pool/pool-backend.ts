// Runs on another host: the backend queues a `start` command for the worker of that computer; the
// worker launches it in a job directory of its own and reports back. Handles are JSON; poll and
// fetch read only what workers reported, so a restarted daemon settles remote runs as well.
import { existsSync } from 'node:fs';
import type { Backend, Handle, Health, JobSpec, LogFollowOptions, LogStream, Outcome, PollState } from '../backend.js';
import type { Clock } from '../clock.js';
import { TendError } from '../errors.js';
import { workerOnline } from '../domain/online.js';
import type { Settings } from '../settings.js';
import type { Store } from '../store/store.js';
import { tendVersion } from '../version.js';
import type { CancelPayload, StartPayload } from '../../../contract/worker-protocol.js';

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

export function poolBackendName(computer: string): string {
  return `pool:${computer}`;
}

/** The pool's timeouts (from Settings). */
export type PoolTimeouts = Pick<Settings, 'commandTtlMs' | 'workerOfflineMs'>;

/** Reading a job directory's logs and manifest (worker/jobdir), given by the host. */
export type JobDirLogs = Pick<Backend, 'tailLog' | 'followLog' | 'readManifest'>;

/**
 * `jobDirLogs` reads a worker's output when its directory is visible here (a worker on this
 * machine, or a file system shared with it); otherwise the output stays on the worker, which
 * has no way to send it yet.
 */
export function createPoolBackend(computer: string, store: Store, clock: Clock, wake: (computer: string) => void, t: PoolTimeouts, jobDirLogs?: JobDirLogs): Backend {
  const { commandTtlMs, workerOfflineMs } = t;
  const online = (seen: number | null, now: number) => workerOnline(seen, now, workerOfflineMs);
  const name = poolBackendName(computer);
  const readable = (runDir: string) => jobDirLogs !== undefined && existsSync(runDir);
  const refOf = (h: Handle) => {
    const runId = h.runId;
    if (typeof runId !== 'string' || h.computer !== computer) throw new TendError('INVALID', `not a ${name} handle`);
    return { runId, kind: (h.kind === 'job' ? 'job' : 'run') as 'run' | 'job', commandId: typeof h.commandId === 'number' ? h.commandId : null };
  };
  /**
   * A worker reports a run within a second of fetching its command. One that has kept talking to
   * us for two TTLs since, without a word about the run, does not have it; one that is away may
   * still, and is waited for.
   */
  const fetchedButForgotten = (fetchedAt: number, now: number): boolean => {
    const grace = 2 * commandTtlMs;
    const seen = store.pool.worker(computer)?.lastSeen ?? null;
    return now - fetchedAt > grace && seen !== null && seen - fetchedAt > grace && online(seen, now);
  };
  /**
   * When the last start command lapsed unfetched. Until the worker is heard from after it, it is
   * treated as away even while the online rule still counts it: otherwise the run just put
   * back to wait would be sent again at once, to nobody. Kept in memory: after a daemon restart
   * the online rule alone decides, which costs at most one more lapsed command.
   */
  let unfetchedAt: number | null = null;
  return {
    name,
    async health(): Promise<Health> {
      const w = store.pool.worker(computer);
      if (!w || w.lastSeen === null) return { ok: false, reason: `worker ${computer} has never connected (start it: tend worker --computer ${computer} …)` };
      if (!online(w.lastSeen, clock.now())) return { ok: false, reason: `worker ${computer} offline since ${new Date(w.lastSeen).toISOString()}` };
      if (unfetchedAt !== null && w.lastSeen <= unfetchedAt) {
        return { ok: false, reason: `worker ${computer} did not fetch its start command (last seen ${new Date(w.lastSeen).toISOString()}); waiting to hear from it` };
      }
      return { ok: true, reason: null };
    },
    async submit(spec: JobSpec): Promise<Handle> {
      const commandId = store.pool.enqueue(computer, 'start', { spec, tendVersion: tendVersion() } satisfies StartPayload, clock.now(), commandTtlMs);
      wake(computer);
      return { computer, runId: spec.runId, kind: spec.kind, commandId };
    },
    async poll(handles: Handle[]): Promise<PollState[]> {
      const now = clock.now();
      return handles.map((h): PollState => {
        const ref = refOf(h);
        const report = store.pool.report(ref.kind, ref.runId);
        if (report?.state === 'running') return { state: 'running', startedAt: report.startedAt, heartbeatAt: report.heartbeatAt };
        if (report) return { state: 'done' };
        const cmd = ref.commandId === null ? null : store.pool.command(ref.commandId);
        if (cmd && cmd.fate === 'queued' && cmd.expiresAt <= now) store.pool.expire(now);
        const fresh = ref.commandId === null ? null : store.pool.command(ref.commandId);
        if (fresh?.fate === 'expired') {
          // Never fetched, so never run (the worker cannot fetch it now): the run waits and is sent afresh.
          unfetchedAt = Math.max(unfetchedAt ?? 0, fresh.expiresAt);
          return { state: 'unsent', reason: `the start command expired: worker ${computer} did not fetch it within ${seconds(commandTtlMs)}; it is sent again once the worker is heard from` };
        }
        if (fresh?.fate === 'fetched' && fresh.fetchedAt !== null && fetchedButForgotten(fresh.fetchedAt, now)) {
          return {
            state: 'lost',
            reason: `worker ${computer} fetched the start command at ${new Date(fresh.fetchedAt).toISOString()} but never reported the run (it restarted before launching it, or the answer was lost)`,
          };
        }
        return { state: 'queued' };
      });
    },
    async fetch(handle: Handle): Promise<Outcome> {
      const ref = refOf(handle);
      const r = store.pool.report(ref.kind, ref.runId);
      if (!r) return { exitCode: null, signal: null, reason: 'no report from the worker', startedAt: null, endedAt: null };
      return {
        exitCode: r.exitCode,
        signal: r.signal,
        reason: r.state === 'refused' ? r.reason ?? 'refused by the worker' : r.reason,
        startedAt: r.startedAt,
        endedAt: r.endedAt,
      };
    },
    async cancel(handle: Handle, graceMs: number): Promise<void> {
      const ref = refOf(handle);
      const now = clock.now();
      // Asked again while a cancel is on its way (every pass sees the run still running): one is enough.
      if (store.pool.cancelSent(computer, ref.runId, now - commandTtlMs - graceMs)) return;
      store.pool.enqueue(computer, 'cancel', { runId: ref.runId, kind: ref.kind, graceMs } satisfies CancelPayload, now, commandTtlMs);
      wake(computer);
    },
    tailLog(runDir: string, stream: LogStream, maxBytes: number) {
      return readable(runDir) ? jobDirLogs!.tailLog(runDir, stream, maxBytes) : '';
    },
    followLog(runDir: string, stream: LogStream, opts?: LogFollowOptions): AsyncIterable<string> {
      if (readable(runDir)) return jobDirLogs!.followLog(runDir, stream, opts);
      const err = new TendError('UNAVAILABLE', `the output of this run stays on worker ${computer} (in ${runDir}): it cannot be followed from here`);
      return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }) };
    },
    readManifest(runDir: string) {
      return readable(runDir) ? jobDirLogs!.readManifest(runDir) : null;
    },
  };
}
