// External routines are started by nobody: they report `start`, `heartbeat`, `complete`, `fail`
// and `log` over the API, each with an optional run id so overlapping runs stay apart. They are
// monitored like any other routine (late → DELAYED; realtime silence → ERROR).
import type { RoutineDef, RunRow } from '../domain/types.js';
import { notFound, TendError } from '../errors.js';
import { nodeCrypto } from '../lazy-crypto.js';
import { maskFreeText, secretsOf } from '../mask.js';
import { moveRun } from '../scheduler/moves.js';
import type { NewEvent } from '../store/events.js';
import type { Store } from '../store/store.js';
import { newRun } from '../domain/run.js';
import { finalizeBatch } from '../scheduler/finalize.js';

export type ExternalAction = 'start' | 'heartbeat' | 'complete' | 'fail' | 'log';

export interface ExternalReport {
  runId?: string;
  exitCode?: number;
  message?: string;
}

const LOG_LIMIT = 8 * 1024;

function externalRoutine(store: Store, id: string): RoutineDef {
  const def = store.routines.get(id);
  if (!def) throw notFound(`routine ${id}`);
  if (!def.external) throw new TendError('CONFLICT', `${id} is not external: Tend starts it and watches it itself`);
  return def;
}

/**
 * Run ids an external routine chooses are its own: two routines may both call a run `1`. The id
 * is stored as given; when another routine's run has it already, as `ext.<routine hash>.<id>`
 * (within the 80 characters of a run id).
 */
export function externalRunId(routineId: string, runId: string): string {
  return `ext.${nodeCrypto().createHash('sha256').update(routineId).digest('hex').slice(0, 8)}.${runId}`;
}

/** A run of this routine by the id the routine gave it. */
function ownRun(store: Store, def: RoutineDef, runId: string): RunRow | null {
  const plain = store.runs.get(runId);
  if (plain && plain.routineId === def.id) return plain;
  const spaced = store.runs.get(externalRunId(def.id, runId));
  return spaced && spaced.routineId === def.id ? spaced : null;
}

function freshRunId(store: Store, def: RoutineDef, runId: string): string {
  return store.runs.get(runId) ? externalRunId(def.id, runId) : runId;
}

/** The run a report is about: the given run id, else the routine's open run. */
function target(store: Store, def: RoutineDef, runId: string | undefined): RunRow | null {
  if (runId) {
    const run = ownRun(store, def, runId);
    if (!run) throw notFound(`run ${runId} of ${def.id}`);
    return run;
  }
  const open = store.runs.activeFor(def.id);
  return open.find((r) => r.status === 'RUNNING' || r.status === 'STARTING') ?? open[0] ?? null;
}

/** The state a run ends in when its routine reports complete (ok) or fail. */
function endState(kind: RoutineDef['kind'], ok: boolean): string {
  return kind === 'batch' ? (ok ? 'COMPLETED' : 'ERROR') : ok ? 'EXITED' : 'ERROR';
}

export function reportExternal(store: Store, log: (e: NewEvent) => void, id: string, action: ExternalAction, r: ExternalReport, now: number): RunRow | null {
  const def = externalRoutine(store, id);
  // What a reporter says is masked like arguments before it is stored: every reader (events API,
  // UI, MCP, webhooks) then sees it masked.
  const message = r.message === undefined ? undefined : maskFreeText(r.message.slice(0, LOG_LIMIT), secretsOf(def));
  return store.tx(() => {
    if (action === 'log') {
      const run = target(store, def, r.runId);
      log({ type: 'external:log', routineId: def.id, runId: run?.id ?? null, message: message ?? '' });
      return run;
    }
    if (action === 'start') {
      // A run id the routine chose itself keeps overlapping runs apart.
      const existing = r.runId ? ownRun(store, def, r.runId) : null;
      // A finished run stays finished: starting it again would rewrite its history.
      if (existing && existing.endedAt !== null) throw new TendError('CONFLICT', `run ${r.runId} of ${def.id} has ended already (${existing.status}): report start with a new run id`);
      let run = existing ?? (def.kind === 'batch' ? store.runs.activeFor(def.id).find((x) => x.status === 'PENDING' || x.status === 'DELAYED') ?? null : null);
      if (!run) {
        run = newRun(def, now, now, { id: r.runId ? freshRunId(store, def, r.runId) : undefined });
        store.runs.insert(run);
      }
      if (run.status === 'PENDING' || run.status === 'DELAYED') moveRun(store, run.id, run.kind, 'launch', { reason: null });
      moveRun(store, run.id, run.kind, 'started', { startedAt: now, heartbeatAt: now });
      log({ type: 'run:running', routineId: def.id, runId: run.id, message: `running (reported by the routine)${message ? `: ${message}` : ''}` });
      return store.runs.get(run.id);
    }
    const run = target(store, def, r.runId);
    if (!run) {
      // A completion sent again (a retried request, a reporter that cannot tell whether it got
      // through): the run it ended is the latest, in the state this report gives. A no-op.
      const last = store.runs.latest(def.id);
      if (last && action !== 'heartbeat' && last.endedAt !== null && last.status === endState(last.kind, action === 'complete')) return last;
      throw new TendError('CONFLICT', `${def.id} has no open run to ${action} (report start first)`);
    }
    if (action === 'heartbeat') {
      store.runs.recordHeartbeat(run.id, now);
      return store.runs.get(run.id);
    }
    const ok = action === 'complete';
    const reason = ok ? null : (message ?? (r.exitCode !== undefined ? `exit ${r.exitCode}` : 'failed (reported by the routine)'));
    const event = run.kind === 'batch' ? (ok ? 'succeed' : 'fail') : ok ? 'exit' : 'give_up';
    if (run.status === 'PENDING' || run.status === 'DELAYED') moveRun(store, run.id, run.kind, 'launch', {});
    const to = moveRun(store, run.id, run.kind, event, { endedAt: now, exitCode: r.exitCode ?? (ok ? 0 : null), reason, startedAt: run.startedAt ?? now });
    if (!to) {
      if (run.status === endState(run.kind, ok)) return run; // the same report again: a no-op
      throw new TendError('CONFLICT', `run ${run.id} is ${run.status} already`);
    }
    log({
      type: ok ? 'run:completed' : 'run:failed',
      routineId: def.id,
      runId: run.id,
      message: ok ? `completed (reported by the routine)` : `failed: ${reason}`,
    });
    if (run.kind === 'batch') finalizeBatch(store, log, run, def, ok, reason, now);
    return store.runs.get(run.id);
  });
}
