// The backlog gate of the submit phase: what is waiting and may start now, in the order it gets
// slots (realtime starts, then runs by run time and creation, then jobs), and why the rest waits.
// Cheap: definitions in memory and indexed reads, never the backend.
import type { JobRow, RoutineDef, RunRow } from '../domain/types.js';
import type { Ctx } from './context.js';
import type { RealtimeStart } from './supervise.js';

export type Item =
  /** `fresh`: fired in this transaction and not written yet (it is written once, as it starts or waits). */
  | { kind: 'run'; run: RunRow; def: RoutineDef; backend: string; schedule: string; recovering: boolean; fresh: boolean }
  | { kind: 'start'; def: RoutineDef; backend: string; schedule: string }
  | { kind: 'job'; job: JobRow; backend: string; schedule: null };

export interface BacklogInput {
  /** Unfinished runs, in the order runs.active() reads them. */
  active: RunRow[];
  realtime: RealtimeStart[];
  jobs: JobRow[];
  /** Filled with why each waiting run did not start (for DELAYED reasons). */
  waiting: Map<string, string>;
}

/**
 * The runs a transaction fired and has not written yet, by routine, in firing order: a
 * dependency's newest run of a cycle may be one of them.
 */
export type Unwritten = ReadonlyMap<string, readonly RunRow[]>;

export function unwritten(runs: readonly RunRow[]): Unwritten {
  const by = new Map<string, RunRow[]>();
  for (const r of runs) {
    const list = by.get(r.routineId);
    if (list) list.push(r);
    else by.set(r.routineId, [r]);
  }
  return by;
}

/**
 * `active` with runs not yet written merged in where runs.active() would read them once written:
 * by run time, then creation; on a tie after every written run (a later rowid), in firing order.
 */
export function withUnwritten(active: readonly RunRow[], runs: readonly RunRow[]): RunRow[] {
  if (runs.length === 0) return active as RunRow[];
  const before = (a: RunRow, b: RunRow) => a.scheduledAt - b.scheduledAt || a.createdAt - b.createdAt;
  // Stable: firing order on ties. Then a merge (active is sorted already, and may be thousands long)
  // that takes a written run first on a tie.
  const sorted = [...runs].sort(before);
  const out: RunRow[] = [];
  let i = 0;
  for (const r of sorted) {
    while (i < active.length && before(active[i]!, r) <= 0) out.push(active[i++]!);
    out.push(r);
  }
  while (i < active.length) out.push(active[i++]!);
  return out;
}

export function collect(ctx: Ctx, now: number, input: BacklogInput, inLedger: Set<string>, fresh: Unwritten = new Map()): Item[] {
  const items: Item[] = [];
  for (const s of input.realtime) {
    if (ctx.defs.observeOnly(s.def)) continue;
    if (!dependenciesRunning(ctx, s.def, input.waiting)) continue;
    items.push({ kind: 'start', def: s.def, backend: ctx.backends.nameFor(s.def), schedule: s.def.schedule });
  }
  const busy = new Set<string>();
  for (const r of input.active) if (r.status === 'STARTING' || r.status === 'RUNNING') busy.add(r.routineId);
  for (const run of input.active) {
    const def = ctx.defs.byId.get(run.routineId);
    if (!def || def.external) continue;
    const isFresh = fresh.get(run.routineId)?.includes(run) ?? false;
    const recovering = !isFresh && run.status === 'STARTING' && !inLedger.has(`run:${run.id}`) && !ctx.store.ledger.lease('run', run.id);
    if (run.status !== 'PENDING' && run.status !== 'DELAYED' && !recovering) continue;
    if (ctx.defs.observeOnly(def)) {
      input.waiting.set(run.id, `schedule ${def.schedule} is observe-only`);
      continue;
    }
    if (run.notBefore !== null && run.notBefore > now) {
      input.waiting.set(run.id, `retry at ${new Date(run.notBefore).toISOString()}`);
      continue;
    }
    if (!recovering) {
      if (def.overlap !== 'allow' && busy.has(def.id)) {
        input.waiting.set(run.id, 'previous run still running');
        continue;
      }
      // Only batch runs wait here (PENDING, DELAYED): a realtime run reaches this loop only to be
      // sent again (recovering), its dependencies checked when it was started.
      if (!run.manual && !dependenciesCompleted(ctx, def, run, input.waiting, fresh)) continue;
    }
    busy.add(def.id);
    items.push({ kind: 'run', run, def, backend: ctx.backends.nameFor(def), schedule: def.schedule, recovering, fresh: isFresh });
  }
  // The jobs given are those this computer may run (JobStore.runnable reads only those).
  for (const job of input.jobs) {
    // A job a remote worker once fetched (and whose claim went stale) runs here on this host's backend.
    const backend = job.backend && !job.backend.startsWith('pool:') ? job.backend : 'local';
    items.push({ kind: 'job', job, backend, schedule: null });
  }
  return items;
}

/** Batch dependencies must reach COMPLETED for the same cycle (the local day of the run time). */
function dependenciesCompleted(ctx: Ctx, def: RoutineDef, run: RunRow, waiting: Map<string, string>, fresh: Unwritten): boolean {
  for (const dep of def.dependencies) {
    const latest = newestInCycle(ctx.store.runs.latestInCycle(dep, run.cycle), fresh.get(dep), run.cycle);
    if (latest?.status !== 'COMPLETED') {
      waiting.set(run.id, `waiting for ${dep} (${latest ? latest.status : 'not run'} on ${run.cycle})`);
      return false;
    }
  }
  return true;
}

/**
 * The newest of a routine's runs in a cycle, in runs.latestInCycle's order (run time, creation,
 * rowid), counting those fired and not written yet: each would be written after every run there is.
 */
export function newestInCycle(written: RunRow | null, pending: readonly RunRow[] | undefined, cycle: string): RunRow | null {
  let latest = written;
  for (const r of pending ?? []) {
    if (r.cycle !== cycle) continue;
    if (!latest || r.scheduledAt > latest.scheduledAt || (r.scheduledAt === latest.scheduledAt && r.createdAt >= latest.createdAt)) latest = r;
  }
  return latest;
}

/** Realtime dependencies must be RUNNING. */
function dependenciesRunning(ctx: Ctx, def: RoutineDef, waiting: Map<string, string>): boolean {
  for (const dep of def.dependencies) {
    const depDef = ctx.defs.byId.get(dep);
    if (depDef?.kind !== 'realtime') continue; // dependencies across kinds are not enforced at runtime
    const latest = ctx.store.runs.latest(dep);
    if (latest?.status !== 'RUNNING') {
      waiting.set(def.id, `waiting for ${dep} to be RUNNING`);
      return false;
    }
  }
  return true;
}
