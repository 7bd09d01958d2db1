// The daily run order that dependencies imply (seed 000): a topological order, earliest first
// run of the day first. O((routines + dependencies) log routines).
import { defaultFirstRunAt } from '../timing/first-run.js';
import { buildGraph, cmp, reverse, type DepRoutine } from './dependencies.js';
import { MinHeap } from './min-heap.js';

export interface DailyEntry {
  id: string;
  /** First run instant of the day (epoch ms); null for realtime routines and for batch routines
   * with no run that day (or whose timing the resolver does not know). */
  firstRunAt: number | null;
  /** True when the routine cannot be placed: it is on a dependency cycle (a self-dependency
   * included) or depends, directly or not, on one. Blocked entries come last. */
  blocked: boolean;
}

export interface DailyOrderOptions {
  /**
   * First run instant of `r` on `day`, or null when it does not run that day. The default knows
   * `runtimes` (earliest HH:MM on that local day in `r.tz`) and `at` (when it falls on that local
   * day); it returns null for `cron` and `every` — inject a resolver built on the timing module
   * (e.g. the first `nextRunAt` after the day's local midnight) to place those.
   */
  firstRunAt?: (r: DepRoutine, day: string) => number | null;
}

/**
 * The daily run order of these routines on `day` (YYYY-MM-DD, read in each routine's own tz).
 *
 * Rule: a topological order in which every routine comes after all its (same-schedule, known)
 * dependencies; whenever several routines are free to come next, the smallest key goes first:
 *   1. realtime routines (alive from the start of the day),
 *   2. then batch routines by first run instant of the day, earliest first,
 *   3. then batch routines with no run that day,
 *   ties broken by id (code-unit order).
 * So a routine due at 06:00 that depends on one due at 07:00 is placed after it. Routines that
 * cannot be placed (cycles and everything downstream of them) follow, sorted by the same key,
 * with `blocked: true`. Every routine appears exactly once (duplicate ids: the first definition).
 */
export function dailyOrder(routines: readonly DepRoutine[], day: string, options: DailyOrderOptions = {}): DailyEntry[] {
  const resolve = options.firstRunAt ?? defaultFirstRunAt;
  const g = buildGraph(routines);
  const nodes = [...g.index.values()].sort((a, b) => a - b);
  const at = new Map<number, number | null>();
  for (const i of nodes) at.set(i, routines[i]!.kind === 'realtime' ? null : resolve(routines[i]!, day));
  const rank = (i: number) => (routines[i]!.kind === 'realtime' ? 0 : at.get(i) === null ? 2 : 1);
  const less = (a: number, b: number): boolean => {
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra < rb;
    if (ra === 1) {
      const ta = at.get(a)!;
      const tb = at.get(b)!;
      if (ta !== tb) return ta < tb;
    }
    return cmp(routines[a]!.id, routines[b]!.id) < 0;
  };

  const dependents = reverse(g);
  const waiting = new Int32Array(routines.length);
  const heap = new MinHeap<number>(less);
  for (const i of nodes) {
    waiting[i] = g.out[i]!.length;
    if (waiting[i] === 0) heap.push(i);
  }
  const order: DailyEntry[] = [];
  const placed = new Uint8Array(routines.length);
  while (heap.size > 0) {
    const i = heap.pop()!;
    placed[i] = 1;
    order.push({ id: routines[i]!.id, firstRunAt: at.get(i)!, blocked: false });
    for (const d of dependents[i]!) if (--waiting[d]! === 0) heap.push(d);
  }
  const blocked = nodes.filter((i) => !placed[i]).sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
  for (const i of blocked) order.push({ id: routines[i]!.id, firstRunAt: at.get(i)!, blocked: true });
  return order;
}
