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

/**
 * Where the value of each `?` of a shape's statement comes from. Bound positionally: named
 * parameters cost a lookup by name each, and the object that carried them a property added per
 * name (a move took about 2.2 µs, positionally 1.5 µs; the pass makes two per run).
 */
interface Slot {
  from: 'id' | 'to' | 'state' | 'patch' | 'extra';
  key: string;
  /** Of the state in `from` (a `state` slot). */
  index: number;
}

interface Shape {
  stmt: Statement;
  slots: Slot[];
}

export class CompareAndSet<P extends object> {
  // One statement per shape (how many states it may leave, which columns it patches), prepared once.
  private readonly prepared = new Map<string, Shape>();

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
    const { stmt, slots } = this.shape(from, patch);
    const args: unknown[] = [];
    for (const s of slots) {
      if (s.from === 'patch') args.push(patch[s.key as keyof P]);
      else if (s.from === 'state') args.push(from[s.index]);
      else if (s.from === 'id') args.push(id);
      else if (s.from === 'to') args.push(to);
      else args.push(extra[s.key]);
    }
    return stmt.run(args).changes === 1;
  }

  // Called for every move of the pass (two per run): one string for the shape, nothing else allocated
  // once the shape is known.
  private shape(from: readonly string[], patch: P): Shape {
    let key = `${from.length}|`;
    for (const k in patch) if (patch[k] !== undefined) key += `${k},`;
    let shape = this.prepared.get(key);
    if (!shape) {
      const keys = (Object.keys(patch) as (keyof P & string)[]).filter((k) => patch[k] !== undefined);
      const { id: idCol, status } = this.keys;
      const sets = [`${status} = @to`, ...this.always, ...keys.map((k) => this.setTerm(k, keys))];
      const states = from.map((_, i) => `@${fromName(i)}`).join(', ');
      const named = `UPDATE ${this.table} SET ${sets.join(', ')} WHERE ${idCol} = @id AND ${status} IN (${states})`;
      // Each @name becomes a ? bound from where the name's value comes from: the patch first, then
      // the states left, the row's key and target, then `extra` (the order a named object was filled in).
      const slots: Slot[] = [];
      const sql = named.replace(/@([A-Za-z_]\w*)/g, (_, name: string) => {
        const state = /^from(\d+)$/.test(name) ? Number(name.slice(4)) : -1;
        if ((keys as string[]).includes(name)) slots.push({ from: 'patch', key: name, index: -1 });
        else if (state >= 0 && state < from.length) slots.push({ from: 'state', key: name, index: state });
        else if (name === 'id' || name === 'to') slots.push({ from: name, key: name, index: -1 });
        else slots.push({ from: 'extra', key: name, index: -1 });
        return '?';
      });
      shape = { stmt: this.db.prepare(sql), slots };
      this.prepared.set(key, shape);
    }
    return shape;
  }
}

const FROM_NAMES = Array.from({ length: 8 }, (_, i) => `from${i}`);
const fromName = (i: number): string => FROM_NAMES[i] ?? `from${i}`;
