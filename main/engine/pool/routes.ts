// Worker-pool routes: workers long-poll the commands addressed to their computer, claim one-off
// batch jobs for their free slots, and report what happened; external routines report here too.
// A worker token reaches only these routes, and only for its own computer. What they take and
// answer is the worker protocol, declared once in contract/worker-protocol.ts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ClaimBody, ClaimResult, CommandsQuery, CommandsResult, ExternalBody, ExternalParams, ExternalResult, ReportsBody, ReportsResult, WORKER_PATHS, type WorkerReport } from '../../../contract/worker-protocol.js';
import type { ApiContext } from '../api/server.js';
import type { RouteDoc } from '../api/route-doc.js';
import { zodIssues } from '../domain/schema.js';
import { invalid, TendError } from '../errors.js';
import { reportExternal } from '../ops/external.js';
import { jobSpec } from '../scheduler/spec.js';
import { moveJob } from '../scheduler/moves.js';
import type { Engine } from '../engine.js';
import type { RemoteReport } from '../store/workers.js';

/**
 * A worker is "seen" when a request starts: a long poll is answered well within the offline
 * threshold, so a worker that is waiting in one is never taken for an offline one.
 */
function pollWait(requested: number, workerOfflineMs: number): number {
  return Math.min(requested, Math.floor(workerOfflineMs / 2));
}

/** These routes as the OpenAPI document describes them (the same schemas the handlers parse with). */
export const POOL_ROUTES: RouteDoc[] = [
  { method: 'GET', path: WORKER_PATHS.commands, scope: 'worker', summary: 'A worker long-polls the commands addressed to its computer (`wait` ms at most)', query: CommandsQuery, result: CommandsResult },
  { method: 'POST', path: WORKER_PATHS.claim, scope: 'worker', summary: 'A worker claims one-off batch jobs for its free slots', body: ClaimBody, result: ClaimResult },
  { method: 'POST', path: WORKER_PATHS.reports, scope: 'worker', summary: 'A worker reports its runs and jobs (running, done, refused)', body: ReportsBody, result: ReportsResult },
  { method: 'POST', path: WORKER_PATHS.external, scope: 'worker', summary: 'An external routine reports: start, heartbeat, complete, fail or log', params: ExternalParams, body: ExternalBody, bodyOptional: true, result: ExternalResult },
];

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value ?? {});
  if (!r.success) throw invalid(zodIssues(r.error));
  return r.data;
}

/** The `computer` a request names (query or body), before the rest of it is read. */
function namedComputer(input: unknown): string | undefined {
  const v = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)['computer'] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** A worker token is bound to one computer: naming any other is refused, whatever else the request says. */
function refuseOtherComputer(ctx: ApiContext, req: FastifyRequest, named: string | undefined): void {
  const who = ctx.principal(req);
  if (who?.kind === 'worker' && named !== undefined && named !== who.computer) {
    throw new TendError('FORBIDDEN', `this token belongs to ${who.computer}, not ${named}`);
  }
}

/**
 * The computer a worker request acts for. Every one names it: a worker token for another
 * computer is refused (403) before the request is parsed; an admin acts for the one it names.
 */
function computerOf(ctx: ApiContext, req: FastifyRequest, input: unknown): string {
  const named = namedComputer(input);
  refuseOtherComputer(ctx, req, named);
  if (!named) throw invalid({ path: 'computer', message: 'required: every worker request names the computer it serves (user@HOST)' });
  return named;
}

/** The handlers of the routes pool/route-list.ts registers, by WORKER_PATHS name. */
export function poolHandlers(ctx: ApiContext): Record<keyof typeof WORKER_PATHS, (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>> {
  const { engine } = ctx;
  const store = engine.store;
  return {
    commands: async (req, reply) => {
      const computer = computerOf(ctx, req, req.query);
      const q = parse(CommandsQuery, req.query);
      const now = () => engine.clock.now();
      store.pool.seen(computer, now(), q);
      let commands = store.pool.fetch(computer, now());
      if (commands.length === 0 && q.wait) {
        const abort = new AbortController();
        // The response's close, not the request's: a POST request "closes" once its body is read.
        reply.raw.on('close', () => abort.abort());
        await engine.wake.wait('commands', computer, pollWait(q.wait, engine.settings.workerOfflineMs), abort.signal);
        commands = abort.signal.aborted ? [] : store.pool.fetch(computer, now());
      }
      return { ok: true, value: { commands: commands.map((c) => ({ id: c.id, kind: c.kind, payload: c.payload, expiresAt: c.expiresAt })) } };
    },
    claim: async (req, reply) => {
      const computer = computerOf(ctx, req, req.body);
      const b = parse(ClaimBody, req.body);
      store.pool.seen(computer, engine.clock.now(), b);
      let jobs = claimJobs(engine, computer, b.slots);
      if (jobs.length === 0 && b.wait) {
        const abort = new AbortController();
        // The response's close, not the request's: a POST request "closes" once its body is read.
        reply.raw.on('close', () => abort.abort());
        // A wake-up is a hint (every pass gives one): with nothing to take, wait on until the poll's
        // end, so a worker is answered when there is work or when its poll is over, not every pass.
        const deadline = Date.now() + pollWait(b.wait, engine.settings.workerOfflineMs);
        for (let left = deadline - Date.now(); left > 0 && !abort.signal.aborted && !engine.wake.closed; left = deadline - Date.now()) {
          await engine.wake.wait('jobs', computer, left, abort.signal);
          if (abort.signal.aborted) break;
          jobs = claimJobs(engine, computer, b.slots);
          if (jobs.length > 0) break;
        }
      }
      return { ok: true, value: { jobs } satisfies z.input<typeof ClaimResult> };
    },
    reports: async (req) => {
      const computer = computerOf(ctx, req, req.body);
      const b = parse(ReportsBody, req.body);
      const now = engine.clock.now();
      store.pool.seen(computer, now, b);
      const refused: { id: string; reason: string }[] = [];
      let settle = false;
      engine.tx(() => {
        for (const r of b.reports) {
          const why = r.kind === 'run' ? applyRunReport(engine, computer, r, now) : applyJobReport(engine, computer, r, now);
          if (why) refused.push({ id: r.id, reason: why });
          else if (r.state !== 'running') settle = true;
        }
      });
      if (settle) engine.nudge();
      return { ok: true, value: { accepted: b.reports.length - refused.length, refused } satisfies z.input<typeof ReportsResult> };
    },
    external: async (req) => {
      refuseOtherComputer(ctx, req, namedComputer(req.body));
      const p = parse(ExternalParams, req.params);
      const b = parse(ExternalBody, req.body);
      const def = store.routines.get(p.id);
      const who = ctx.principal(req);
      if (def && who?.kind === 'worker' && def.computer !== who.computer) {
        throw new TendError('FORBIDDEN', `this token belongs to ${who.computer}; ${p.id} runs on ${def.computer}`);
      }
      const run = engine.tx(() => reportExternal(store, (e) => engine.log(e), p.id, p.action, b, engine.clock.now()));
      engine.nudge();
      return { ok: true, value: { runId: run?.id ?? null, status: run?.status ?? null } satisfies z.input<typeof ExternalResult> };
    },
  };
}

function claimJobs(engine: Engine, computer: string, slots: number) {
  const store = engine.store;
  const now = engine.clock.now();
  return engine.tx(() => {
    const out: { id: number; spec: ReturnType<typeof jobSpec> }[] = [];
    // A few more than asked: the scheduler of this host may hold a lease on some of them.
    for (const job of store.jobs.claimable(computer, slots + 64)) {
      if (out.length >= slots) break;
      if (!store.ledger.claim('job', String(job.id), computer, now)) continue;
      if (!moveJob(store, job.id, 'claim', { fetchedBy: computer, backend: `pool:${computer}` }, now)) {
        store.ledger.release('job', String(job.id));
        continue;
      }
      engine.log({ type: 'job:fetched', jobId: job.id, message: `job ${job.id} fetched by ${computer}` });
      out.push({ id: job.id, spec: jobSpec(engine.dataDir, job) });
    }
    return out;
  });
}

function toReport(computer: string, r: z.output<typeof WorkerReport>): RemoteReport {
  return {
    kind: r.kind,
    refId: r.id,
    computer,
    state: r.state,
    pid: r.pid ?? null,
    exitCode: r.exitCode ?? null,
    signal: r.signal ?? null,
    reason: r.reason ?? null,
    runDir: r.runDir ?? null,
    startedAt: r.startedAt ?? null,
    endedAt: r.endedAt ?? null,
    heartbeatAt: r.heartbeatAt ?? null,
  };
}

/** A run is reported only by the computer it was sent to; the pass settles it from the report. */
function applyRunReport(engine: Engine, computer: string, r: z.output<typeof WorkerReport>, now: number): string | null {
  const entry = engine.store.ledger.get('run', r.id);
  if (!entry) return engine.store.pool.report('run', r.id) ? null : `run ${r.id} is not in flight`;
  if (entry.backend !== `pool:${computer}`) return `run ${r.id} was not sent to ${computer}`;
  engine.store.pool.saveReport(toReport(computer, r), now);
  // The run's directory is the one on the worker's host (logs and manifest are there).
  const run = engine.store.runs.get(r.id);
  if (run && r.runDir && run.runDir !== r.runDir) engine.store.runs.cas(run.id, [run.status], run.status, { runDir: r.runDir });
  return null;
}

/** Batch jobs fetched by a worker move as the worker reports them. */
function applyJobReport(engine: Engine, computer: string, r: z.output<typeof WorkerReport>, now: number): string | null {
  const store = engine.store;
  const id = Number(r.id);
  const job = Number.isSafeInteger(id) ? store.jobs.get(id) : null;
  if (!job) return `unknown job ${r.id}`;
  const lease = store.ledger.lease('job', r.id);
  const holder = lease?.owner ?? job.backend?.replace(/^pool:/, '') ?? null;
  if (holder !== computer) return `job ${r.id} is not held by ${computer}`;
  if (!lease && job.status === 'PENDING') {
    // Its claim went stale before the worker could say it launched it, and nobody has taken it
    // since: it is running there, so it is this worker's again (never a second launch elsewhere).
    if (!store.ledger.claim('job', r.id, computer, now) || !moveJob(store, id, 'claim', { fetchedBy: computer, backend: `pool:${computer}` }, now)) {
      return `job ${r.id} is not held by ${computer}`;
    }
    engine.log({ type: 'job:fetched', level: 'warn', jobId: id, message: `job ${id} reclaimed by ${computer}, which reported it running after its claim went stale` });
  }
  const patch = { startedAt: r.startedAt ?? now, runDir: r.runDir ?? null };
  if (moveJob(store, id, 'start', patch, now)) engine.log({ type: 'job:running', jobId: id, message: `job ${id} running on ${computer}` });
  store.ledger.release('job', r.id);
  if (r.state === 'running') return null;
  const ok = r.state === 'done' && r.exitCode === 0 && !r.signal && !r.reason;
  const reason = ok ? null : (r.reason ?? (r.signal ? `killed by ${r.signal}` : r.exitCode !== null && r.exitCode !== undefined ? `exit ${r.exitCode}` : 'failed'));
  const to = moveJob(store, id, r.state === 'refused' ? 'fail' : ok ? 'succeed' : 'fail', { exitCode: r.exitCode ?? null, signal: r.signal ?? null, reason, endedAt: r.endedAt ?? now }, now);
  if (to) {
    engine.log({
      type: ok ? 'job:completed' : 'job:failed',
      jobId: id,
      message: ok ? `job ${id} completed on ${computer}` : `job ${id} failed on ${computer}: ${reason}`,
    });
  }
  return null;
}
