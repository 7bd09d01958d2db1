// The dependency graph between routines of the same schedule (seed 000): checking it, and impact
// (who is upstream/downstream of a routine). The daily run order it implies is in daily-order.ts.
// Pure functions over definitions; linear in routines + dependencies.
//
// Direction: `a → b` always reads "a depends on b" (b must complete/be running first).
// Edges count only between routines of the SAME schedule; a dependency naming an unknown routine,
// or one in another schedule, is reported by checkDependencies() and ignored everywhere else.

import type { RoutineDef } from '../domain/types.js';
import type { Issue } from '../errors.js';

export type DepRoutine = Pick<RoutineDef, 'id' | 'schedule' | 'kind' | 'dependencies' | 'timing' | 'tz'>;

const MAX_NAMES = 10;

export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export interface Graph {
  routines: readonly DepRoutine[];
  /** id → index of its first definition. */
  index: Map<string, number>;
  /** out[i]: indexes i depends on (same schedule, known; self-loops kept; duplicates removed). */
  out: number[][];
}

export function buildGraph(routines: readonly DepRoutine[]): Graph {
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

export function reverse(g: Graph): number[][] {
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
