// Which native notifications to show, from engine events over time. Pure: the caller feeds events
// with their arrival time, sets a timer for the instant `offer` returns, and shows what `flush`
// gives back.
//
// - A routine entering ERROR or DELAYED is news: the event catalogue's `error` and `delayed`
//   trouble (the same events the webhooks announce). A realtime restart (`restart`) is not: Tend
//   is already handling it, and the webhook says so to whoever wants to hear.
// - At most one notification per routine and kind per `perRoutineMs`: a one-shot retried every
//   minute for an hour does not notify sixty times.
// - Everything arriving within `groupWindowMs` of the first item becomes one notification
//   ("3 routines failed"): a morning where a shared dependency broke is one message, not twenty.
import { troubleOf as catalogueTrouble } from '../engine/events/catalogue.js';
import { shortId } from './tray-model.js';

export type Trouble = 'ERROR' | 'DELAYED';

export interface PolicyEvent {
  type: string;
  routineId: string | null;
  message: string;
}

export interface Notice {
  title: string;
  body: string;
  /** Where a click takes the window: one routine's page, or Today for a group. */
  target: string;
  routineIds: string[];
}

export interface NotifyPolicyOptions {
  perRoutineMs?: number;
  groupWindowMs?: number;
  /** Routines named in a grouped notification's body before "and N more". */
  maxNamed?: number;
}

export function troubleOf(e: PolicyEvent): Trouble | null {
  if (!e.routineId) return null;
  const t = catalogueTrouble(e.type);
  return t === 'error' ? 'ERROR' : t === 'delayed' ? 'DELAYED' : null;
}

/** The renderer's route for a routine page (hash router). */
export function routineTarget(id: string): string {
  return `#/routine/${encodeURIComponent(id)}`;
}

export const TODAY_TARGET = '#/today';

interface Pending {
  routineId: string;
  trouble: Trouble;
  message: string;
}

export class NotificationPolicy {
  private readonly perRoutineMs: number;
  private readonly groupWindowMs: number;
  private readonly maxNamed: number;
  /** `${trouble} ${routineId}` → when it was last notified. */
  private readonly last = new Map<string, number>();
  private pending: Pending[] = [];
  private windowEnds: number | null = null;

  constructor(o: NotifyPolicyOptions = {}) {
    this.perRoutineMs = o.perRoutineMs ?? 15 * 60_000;
    this.groupWindowMs = o.groupWindowMs ?? 5_000;
    this.maxNamed = o.maxNamed ?? 4;
  }

  /**
   * Consider an event. Returns the instant at which `flush` should be called when this event
   * opened a new grouping window, else null (nothing to do, or a flush is already due).
   */
  offer(e: PolicyEvent, now: number): number | null {
    const trouble = troubleOf(e);
    if (!trouble || !e.routineId) return null;
    const key = `${trouble} ${e.routineId}`;
    const prev = this.last.get(key);
    if (prev !== undefined && now - prev < this.perRoutineMs) return null;
    this.last.set(key, now);
    const same = this.pending.find((p) => p.routineId === e.routineId);
    if (same) {
      // One line per routine in a group: ERROR outranks DELAYED.
      if (trouble === 'ERROR' || same.trouble === 'DELAYED') Object.assign(same, { trouble, message: e.message });
    } else this.pending.push({ routineId: e.routineId, trouble, message: e.message });
    if (this.windowEnds !== null) return null;
    this.windowEnds = now + this.groupWindowMs;
    return this.windowEnds;
  }

  /** When a flush is due, if something is waiting. */
  get dueAt(): number | null {
    return this.windowEnds;
  }

  /** The notification for everything gathered, once the window is over (else nothing yet). */
  flush(now: number): Notice[] {
    if (this.windowEnds === null || now < this.windowEnds) return [];
    const items = this.pending;
    this.pending = [];
    this.windowEnds = null;
    if (items.length === 0) return [];
    if (items.length === 1) {
      const it = items[0]!;
      const name = shortId(it.routineId);
      return [{ title: it.trouble === 'ERROR' ? `${name} failed` : `${name} is delayed`, body: it.message, target: routineTarget(it.routineId), routineIds: [it.routineId] }];
    }
    const failed = items.filter((i) => i.trouble === 'ERROR');
    const delayed = items.filter((i) => i.trouble === 'DELAYED');
    const title =
      failed.length && delayed.length
        ? `${failed.length} ${failed.length === 1 ? 'routine' : 'routines'} failed, ${delayed.length} delayed`
        : failed.length
          ? `${failed.length} routines failed`
          : `${delayed.length} routines delayed`;
    const ordered = [...failed, ...delayed];
    const named = ordered.slice(0, this.maxNamed).map((i) => shortId(i.routineId));
    const rest = ordered.length - named.length;
    const body = rest > 0 ? `${named.join(', ')} and ${rest} more` : named.join(', ');
    return [{ title, body, target: TODAY_TARGET, routineIds: ordered.map((i) => i.routineId) }];
  }
}
