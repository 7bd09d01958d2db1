// Batch jobs as a layered dependency graph: a job sits one layer right of its deepest
// dependency. Pure geometry for a small SVG.
import type { JobRow } from '../../../contract/calls.js';

export interface GraphNode {
  job: JobRow;
  layer: number;
  x: number;
  y: number;
}

export interface GraphEdge {
  from: GraphNode;
  to: GraphNode;
}

export interface GraphLayout {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

export const NODE_W = 168;
export const NODE_H = 40;
const GAP_X = 56;
const GAP_Y = 14;
const PAD = 12;

export function layerJobs(jobs: readonly JobRow[]): GraphLayout {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const layer = new Map<number, number>();
  const visiting = new Set<number>();
  const depth = (id: number): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // a cycle cannot be posted; be safe anyway
    visiting.add(id);
    const job = byId.get(id)!;
    let d = 0;
    for (const dep of job.dependencies) if (byId.has(dep)) d = Math.max(d, depth(dep) + 1);
    visiting.delete(id);
    layer.set(id, d);
    return d;
  };
  const columns: JobRow[][] = [];
  for (const j of [...jobs].sort((a, b) => a.id - b.id)) {
    const d = depth(j.id);
    (columns[d] ??= []).push(j);
  }
  const nodes = new Map<number, GraphNode>();
  columns.forEach((col, l) =>
    col.forEach((job, i) => nodes.set(job.id, { job, layer: l, x: PAD + l * (NODE_W + GAP_X), y: PAD + i * (NODE_H + GAP_Y) })),
  );
  const edges: GraphEdge[] = [];
  for (const n of nodes.values()) for (const dep of n.job.dependencies) {
    const from = nodes.get(dep);
    if (from) edges.push({ from, to: n });
  }
  const rows = Math.max(0, ...columns.map((c) => c.length));
  return {
    nodes: [...nodes.values()],
    edges,
    width: PAD * 2 + columns.length * NODE_W + Math.max(0, columns.length - 1) * GAP_X,
    height: PAD * 2 + rows * NODE_H + Math.max(0, rows - 1) * GAP_Y,
  };
}

/** The jobs worth drawing: the `limit` newest, plus the dependencies they name. */
export function graphJobs(jobs: readonly JobRow[], limit = 60): JobRow[] {
  const newest = [...jobs].sort((a, b) => b.id - a.id).slice(0, limit);
  const keep = new Map(newest.map((j) => [j.id, j]));
  const all = new Map(jobs.map((j) => [j.id, j]));
  for (const j of newest) for (const d of j.dependencies) {
    const dep = all.get(d);
    if (dep) keep.set(d, dep);
  }
  return [...keep.values()];
}
