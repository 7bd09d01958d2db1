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

/** A move's arguments, which a shape's statement binds its values from. */
interface Move {
  id: string | number;
  from: readonly string[];
  to: string;
  patch: Record<string, unknown>;
  extra: Record<string, unknown>;
}

/**
 * The value of one `?` of a shape's statement, read from a move's arguments. Bound positionally:
 * named parameters cost a lookup by name each, and the object that carried them a property added
 * per name (a run's move took about 2.2 µs, now 1.9; the pass makes two per run).
 */
type Slot = (m: Move) => unknown;

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
    const m: Move = { id, from, to, patch: patch as Record<string, unknown>, extra };
    const args: unknown[] = [];
    for (const slot of slots) args.push(slot(m));
    return stmt.run(args).changes === 1;
  }

  // Called for every move of the pass (two per run): one string for the shape, and once the shape
  // is known, the arguments and their values.
  private shape(from: readonly string[], patch: P): Shape {
    let key = `${from.length}|`;
    for (const k in patch) if (patch[k] !== undefined) key += `${k},`;
    let shape = this.prepared.get(key);
    if (!shape) {
      const keys: string[] = (Object.keys(patch) as (keyof P & string)[]).filter((k) => patch[k] !== undefined);
      const { id: idCol, status } = this.keys;
      const sets = [`${status} = @to`, ...this.always, ...keys.map((k) => this.setTerm(k as keyof P & string, keys))];
      const states = from.map((_, i) => `@${fromName(i)}`).join(', ');
      const named = `UPDATE ${this.table} SET ${sets.join(', ')} WHERE ${idCol} = @id AND ${status} IN (${states})`;
      // Each @name becomes a ? bound from where its value comes from, in the order a named object
      // was filled in: the patch first, then the states left, the row's key and target, then `extra`.
      const stateAt = new Map(from.map((_, i) => [fromName(i), i]));
      const slotOf = (name: string): Slot => {
        if (keys.includes(name)) return (m) => m.patch[name];
        const i = stateAt.get(name);
        if (i !== undefined) return (m) => m.from[i];
        if (name === 'id') return (m) => m.id;
        if (name === 'to') return (m) => m.to;
        return (m) => m.extra[name];
      };
      const slots: Slot[] = [];
      const sql = named.replace(/@(\w+)/g, (_, name: string) => {
        slots.push(slotOf(name));
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
