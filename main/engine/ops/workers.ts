// Forgetting a worker host that is gone for good (a dead machine, a reinstalled one). Until then
// its runs and jobs wait for it, because a missing host is not a statement about the work and a
// launch elsewhere could run it twice. Forgetting is the person saying "it will not come back":
// its in-flight runs end with an unknown outcome (the routines' policies decide what follows),
// jobs it was running end in ERROR, jobs it had only claimed go back to the queue, its unsent
// commands expire, and its token stops working.
import { TendError, notFound } from '../errors.js';
import { workerOnline } from '../domain/online.js';
import { moveJob } from '../scheduler/moves.js';
import type { NewEvent } from '../store/events.js';
import type { Store } from '../store/store.js';

export interface ForgetResult {
  computer: string;
  /** In-flight runs the next pass settles, outcome unknown (batch: ERROR; realtime: EXITED, then its restart waits). */
  runs: number;
  /** Jobs it was running, now ERROR. */
  failedJobs: number;
  /** Jobs it had claimed but not started, PENDING again. */
  requeuedJobs: number;
  /** Commands it had not fetched, now expired. */
  expiredCommands: number;
}

export function forgetWorker(store: Store, log: (e: NewEvent) => void, computer: string, o: { force?: boolean; now: number; workerOfflineMs: number }): ForgetResult {
  return store.tx(() => {
    const w = store.pool.worker(computer);
    if (!w) throw notFound(`worker ${computer}`);
    const silentMs = w.lastSeen === null ? null : o.now - w.lastSeen;
    if (!o.force && silentMs !== null && workerOnline(w.lastSeen, o.now, o.workerOfflineMs)) {
      throw new TendError('CONFLICT', `worker ${computer} was heard from ${Math.round(silentMs / 1000)} s ago: it is online. Stop it first, or forget it anyway with force`);
    }
    const lastSeen = w.lastSeen === null ? 'never seen' : `last seen ${new Date(w.lastSeen).toISOString()}`;
    const why = `worker ${computer} was forgotten (${lastSeen}): how this ended is unknown`;
    const backend = `pool:${computer}`;
    const out: ForgetResult = { computer, runs: 0, failedJobs: 0, requeuedJobs: 0, expiredCommands: 0 };

    // Runs: a report of an unknown end, which the next pass settles like any other.
    for (const e of store.ledger.all()) {
      if (e.backend !== backend || store.pool.report(e.kind, e.refId)?.state === 'done') continue;
      store.pool.saveReport(
        { kind: e.kind, refId: e.refId, computer, state: 'done', pid: null, exitCode: null, signal: null, reason: why, runDir: null, startedAt: null, endedAt: o.now, heartbeatAt: null },
        o.now,
      );
      out.runs++;
    }
    // Jobs: running there → ERROR; claimed but never started → back to the queue.
    for (const job of [...store.jobs.withStatus('RUNNING'), ...store.jobs.withStatus('FETCHED')]) {
      const lease = store.ledger.lease('job', String(job.id));
      const held = lease ? lease.owner === computer : job.backend === backend;
      if (!held) continue;
      if (job.status === 'RUNNING') {
        if (moveJob(store, job.id, 'fail', { reason: why, endedAt: o.now }, o.now)) {
          out.failedJobs++;
          log({ type: 'job:failed', jobId: job.id, message: `job ${job.id} failed: ${why}` });
        }
      } else if (moveJob(store, job.id, 'release', { fetchedBy: null, backend: null }, o.now)) {
        out.requeuedJobs++;
        log({ type: 'job:pending', level: 'warn', jobId: job.id, message: `job ${job.id} back in the queue: ${computer}, which had claimed it, was forgotten` });
      }
      store.ledger.release('job', String(job.id));
    }
    out.expiredCommands = store.pool.expireFor(computer);
    store.pool.removeWorker(computer);
    log({
      type: 'worker:forgotten',
      message: `worker ${computer} forgotten (${lastSeen}): ${out.runs} run(s) end unknown, ${out.failedJobs} job(s) failed, ${out.requeuedJobs} job(s) back in the queue; its token no longer works`,
      data: { ...out },
    });
    return out;
  });
}
