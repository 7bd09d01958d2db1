// Compare-and-set, the one way a status changes in SQL: `UPDATE … SET status = @to, … WHERE id = @id
// AND status IN (…)` (a table may name its key and status columns otherwise: triggers use
// `routine_id` and `state`). It changes a row only if it is still in a state it was expected to be in, so
// two movers of the same row (the pass, a CLI stop, a worker's report) cannot both win.
import type { DB } from './db.js';

type Statement = ReturnType<DB['prepare']>;

/** The row's key column and the column that holds its state. */
export interface CasKeys {
  id: string;
  status: string;
}

export class CompareAndSet<P extends object> {
  // One statement per shape (how many states it may leave, which columns it patches), prepared once.
  private readonly prepared = new Map<string, Statement>();

  /**
   * `columns` maps each patch field to its column; `always` are SET terms of every move (bound from
   * `extra`). `span` names the start and end fields of the row: whatever a move patches, the end is
   * never before the start (clocks of different sources — /proc tick times, a sentinel's mtime,
   * Date.now — disagree by milliseconds, and a duration is never negative).
   */
  constructor(
    private readonly db: DB,
    private readonly table: string,
    private readonly columns: Record<keyof P, string>,
    private readonly always: readonly string[],
    private readonly span?: { start: keyof P & string; end: keyof P & string },
    private readonly keys: CasKeys = { id: 'id', status: 'status' },
  ) {}

  private setTerm(k: keyof P & string, keys: readonly string[]): string {
    const col = this.columns[k];
    const span = this.span;
    if (span && k === span.end) {
      const start = keys.includes(span.start) ? `@${span.start}` : this.columns[span.start];
      return `${col} = MAX(@${k}, COALESCE(${start}, @${k}))`;
    }
    if (span && k === span.start && !keys.includes(span.end)) return `${col} = MIN(@${k}, COALESCE(${this.columns[span.end]}, @${k}))`;
    return `${col} = @${k}`;
  }

  /** True when the row was in one of `from` and is now `to`, patched; false when someone moved it first. */
  move(id: string | number, from: readonly string[], to: string, patch: P, extra: Record<string, unknown> = {}): boolean {
    const { stmt, params } = this.bind(id, from, to, patch, extra);
    return stmt.run(params).changes === 1;
  }

  // Called for every move of the pass (three per run): one string for the shape and one object for
  // the parameters, nothing else allocated.
  private bind(id: string | number, from: readonly string[], to: string, patch: P, extra: Record<string, unknown>) {
    const params: Record<string, unknown> = {};
    for (const k in extra) params[k] = extra[k];
    params['id'] = id;
    params['to'] = to;
    for (let i = 0; i < from.length; i++) params[fromName(i)] = from[i];
    let shape = `${from.length}|`;
    for (const k in patch) {
      if (patch[k] === undefined) continue;
      params[k] = patch[k];
      shape += `${k},`;
    }
    let stmt = this.prepared.get(shape);
    if (!stmt) {
      const keys = (Object.keys(patch) as (keyof P & string)[]).filter((k) => patch[k] !== undefined);
      const { id: idCol, status } = this.keys;
      const sets = [`${status} = @to`, ...this.always, ...keys.map((k) => this.setTerm(k, keys))];
      const states = from.map((_, i) => `@${fromName(i)}`).join(', ');
      stmt = this.db.prepare(`UPDATE ${this.table} SET ${sets.join(', ')} WHERE ${idCol} = @id AND ${status} IN (${states})`);
      this.prepared.set(shape, stmt);
    }
    return { stmt, params };
  }
}

const FROM_NAMES = Array.from({ length: 8 }, (_, i) => `from${i}`);
const fromName = (i: number): string => FROM_NAMES[i] ?? `from${i}`;
