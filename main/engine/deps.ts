// Dependencies between routines of the same schedule (seed 000): checking them, the daily run
// order they imply, and impact (who is upstream/downstream of a routine). Pure functions over
// definitions; linear in routines + dependencies (the order adds a log factor for its heap).
//
// Direction: `a → b` always reads "a depends on b" (b must complete/be running first).
// Edges count only between routines of the SAME schedule; a dependency naming an unknown routine,
// or one in another schedule, is reported by checkDependencies() and ignored everywhere else.

import type { RoutineDef } from './domain/types.js';
import type { Issue } from './errors.js';
import { cycleDay, localToUtc, nextRunAt } from './timing/next.js';

export type DepRoutine = Pick<RoutineDef, 'id' | 'schedule' | 'kind' | 'dependencies' | 'timing' | 'tz'>;

const MAX_NAMES = 10;

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Graph {
  routines: readonly DepRoutine[];
  /** id → index of its first definition. */
  index: Map<string, number>;
  /** out[i]: indexes i depends on (same schedule, known; self-loops kept; duplicates removed). */
  out: number[][];
}

function buildGraph(routines: readonly DepRoutine[]): Graph {
  const index = new Map<string, number>();
  routines.forEach((r, i) => {
    if (!index.has(r.id)) index.set(r.id, i);
  });
  const out = routines.map((r, i) => {
    const seen = new Set<number>();
    if (index.get(r.id) !== i) return []; // a duplicate definition takes no part in the graph
    for (const dep of r.dependencies) {
      const j = index.get(dep);
      if (j === undefined || routines[j]!.schedule !== r.schedule) continue;
      seen.add(j);
    }
    return [...seen];
  });
  return { routines, index, out };
}

function reverse(g: Graph): number[][] {
  const inn: number[][] = g.routines.map(() => []);
  g.out.forEach((deps, i) => {
    for (const j of deps) inn[j]!.push(i);
  });
  return inn;
}

/** Strongly connected components (Tarjan, iterative: a 10k-long chain must not blow the stack). */
function components(out: number[][]): number[][] {
  const n = out.length;
  const idx = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const result: number[][] = [];
  let counter = 0;
  const frames: Array<[node: number, edge: number]> = [];
  for (let root = 0; root < n; root++) {
    if (idx[root] !== -1) continue;
    frames.push([root, 0]);
    idx[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const [v, e] = frame;
      const edges = out[v]!;
      if (e < edges.length) {
        frame[1] = e + 1;
        const w = edges[e]!;
        if (idx[w] === -1) {
          idx[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          frames.push([w, 0]);
        } else if (onStack[w]) {
          low[v] = Math.min(low[v]!, idx[w]!);
        }
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === idx[v]) {
        const comp: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          comp.push(w);
        } while (w !== v);
        result.push(comp);
      }
    }
  }
  return result;
}

/** A shortest cycle through `start` inside one component, as ids: [start, …, start]. */
function cycleThrough(start: number, members: Set<number>, g: Graph): string[] {
  const id = (i: number) => g.routines[i]!.id;
  const parent = new Map<number, number>([[start, -1]]);
  let queue = [start];
  while (queue.length > 0) {
    const nextQueue: number[] = [];
    for (const v of queue) {
      const deps = g.out[v]!.filter((w) => members.has(w)).sort((a, b) => cmp(id(a), id(b)));
      for (const w of deps) {
        if (w === start) {
          const path: number[] = [];
          for (let x = v; x !== -1; x = parent.get(x)!) path.push(x);
          return [...path.reverse(), start].map(id);
        }
        if (!parent.has(w)) {
          parent.set(w, v);
          nextQueue.push(w);
        }
      }
    }
    queue = nextQueue;
  }
  return [id(start), id(start)]; // unreachable for a real component; keeps the function total
}

/** `a → b → c → a`; a very long cycle keeps its first and last steps: `a → … (n more) → z → a`. */
function cyclePath(cycle: string[]): string {
  if (cycle.length <= 2 * MAX_NAMES + 1) return cycle.join(' → ');
  const head = cycle.slice(0, MAX_NAMES);
  const tail = cycle.slice(-MAX_NAMES);
  return [...head, `… (${cycle.length - 2 * MAX_NAMES} more)`, ...tail].join(' → ');
}

function names(ids: string[]): string {
  return ids.length <= MAX_NAMES ? ids.join(', ') : `${ids.slice(0, MAX_NAMES).join(', ')} and ${ids.length - MAX_NAMES} more`;
}

/**
 * Problems in the dependencies of these routines, in a stable order:
 * - duplicate routine ids (`routines.<i>.id`);
 * - per dependency (`routines.<i>.dependencies.<j>`): self-dependency, the same dependency twice,
 *   an unknown routine, a routine of another schedule (each message names the dependency);
 * - one issue per dependency cycle (`routines.<i>.dependencies`, i = the cycle's smallest id),
 *   naming a shortest cycle through that routine: `dependency cycle: a → b → c → a`, plus the other
 *   routines caught in the same tangle when there are more.
 */
export function checkDependencies(routines: readonly DepRoutine[]): Issue[] {
  const issues: Issue[] = [];
  const g = buildGraph(routines);
  routines.forEach((r, i) => {
    const first = g.index.get(r.id)!;
    if (first !== i) issues.push({ path: `routines.${i}.id`, message: `duplicate routine id ${r.id} (first defined at routines.${first})` });
  });
  routines.forEach((r, i) => {
    const listed = new Set<string>();
    r.dependencies.forEach((dep, j) => {
      const path = `routines.${i}.dependencies.${j}`;
      if (dep === r.id) {
        issues.push({ path, message: `${r.id} depends on itself` });
      } else if (listed.has(dep)) {
        issues.push({ path, message: `dependency ${dep} is listed twice` });
      } else {
        const k = g.index.get(dep);
        if (k === undefined) {
          issues.push({ path, message: `unknown dependency ${dep}: no routine with that id in schedule ${r.schedule}` });
        } else if (routines[k]!.schedule !== r.schedule) {
          issues.push({
            path,
            message: `dependency ${dep} is in schedule ${routines[k]!.schedule}, not ${r.schedule} (dependencies must be in the same schedule)`,
          });
        }
      }
      listed.add(dep);
    });
  });
  const cycles: Array<{ start: number; issue: Issue }> = [];
  for (const comp of components(g.out)) {
    if (comp.length < 2) continue; // a self-loop is reported above as "depends on itself"
    const members = new Set(comp);
    const start = comp.reduce((a, b) => (cmp(routines[a]!.id, routines[b]!.id) <= 0 ? a : b));
    const cycle = cycleThrough(start, members, g);
    const onCycle = new Set(cycle);
    const others = comp.map((i) => routines[i]!.id).filter((id) => !onCycle.has(id)).sort(cmp);
    let message = `dependency cycle: ${cyclePath(cycle)}`;
    if (others.length > 0) message += ` (also caught in the same cycles: ${names(others)})`;
    cycles.push({ start, issue: { path: `routines.${start}.dependencies`, message } });
  }
  cycles.sort((a, b) => a.start - b.start);
  for (const c of cycles) issues.push(c.issue);
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Daily order

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

class MinHeap<T> {
  private items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => boolean) {}
  get size(): number {
    return this.items.length;
  }
  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * The default resolver of dailyOrder(): the routine's first run time on that local day, by the
 * same rules as the scheduler (timing/next.ts, DST included); null for `every` loops (no fixed
 * time), realtime routines, malformed timings or unknown zones.
 */
export function defaultFirstRunAt(r: DepRoutine, day: string): number | null {
  const t = r.timing;
  const d = DAY.exec(day);
  if (t === null || t.mode === 'every' || !d) return null;
  if (t.mode === 'runtimes') {
    // Stored definitions are validated; tolerate hand-made ones by skipping what is not HH:MM.
    const ok = t.runtimes.filter((x) => HHMM.test(x));
    if (ok.length === 0) return null;
    if (ok.length !== t.runtimes.length) return defaultFirstRunAt({ ...r, timing: { mode: 'runtimes', runtimes: ok } }, day);
  }
  try {
    const start = localToUtc({ year: Number(d[1]), month: Number(d[2]), day: Number(d[3]) }, r.tz);
    const first = t.mode === 'at' ? Date.parse(t.at) : nextRunAt(t, start - 1, r.tz);
    return first !== null && !Number.isNaN(first) && cycleDay(first, r.tz) === day ? first : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Impact

function walk(id: string, routines: readonly DepRoutine[], direction: 'up' | 'down'): string[] {
  const g = buildGraph(routines);
  const start = g.index.get(id);
  if (start === undefined) return [];
  const edges = direction === 'up' ? g.out : reverse(g);
  const seen = new Set<number>([start]);
  const result: string[] = [];
  let level = [start];
  while (level.length > 0) {
    const next: number[] = [];
    for (const v of level) {
      for (const w of edges[v]!) {
        if (seen.has(w)) continue;
        seen.add(w);
        next.push(w);
      }
    }
    next.sort((a, b) => cmp(routines[a]!.id, routines[b]!.id));
    for (const w of next) result.push(routines[w]!.id);
    level = next;
  }
  return result;
}

/**
 * Every routine that depends on `id`, directly or not (what a failure of `id` holds up):
 * nearest first, then by id. Never includes `id` itself (even on a cycle); [] for an unknown id.
 */
export function downstream(id: string, routines: readonly DepRoutine[]): string[] {
  return walk(id, routines, 'down');
}

/**
 * Every routine `id` depends on, directly or not (what must complete/be running first):
 * nearest first, then by id. Never includes `id` itself; [] for an unknown id.
 */
export function upstream(id: string, routines: readonly DepRoutine[]): string[] {
  return walk(id, routines, 'up');
}
