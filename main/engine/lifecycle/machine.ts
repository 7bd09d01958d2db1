// One shape for every state machine in Tend: a transition table as data and one pure
// `transition()`. Terminal states absorb late events: the answer is the same terminal state,
// flagged `absorbed`, never an error (a late exit report for a run stopped by hand is normal).
//
// An event the table does not allow from a non-terminal state is REJECTED BY VALUE: `transition()`
// returns `{ ok: false, ... }` and never throws (the pass never throws). Callers that want an
// exception use `mustTransition()`, which throws TendError('CONFLICT').
//
// Tables are written for SQL too: `fromStates(event)` gives the states an event may leave, for a
// compare-and-set `UPDATE … SET status=? WHERE id=? AND status IN (…)`.

import { TendError } from '../errors.js';

/** `{ [state]: { [event]: nextState } }`; a missing entry means "not allowed". */
export type TransitionTable<S extends string, E extends string> = {
  readonly [K in S]: { readonly [V in E]?: S };
};

export type TransitionResult<S extends string, E extends string> =
  /** Allowed (`changed` false for a self-loop) or absorbed by a terminal state. */
  | { ok: true; state: S; changed: boolean; absorbed: boolean }
  /** Not allowed from this non-terminal state (or an unknown state/event): state unchanged. */
  | { ok: false; state: S; changed: false; absorbed: false; event: E; message: string };

export interface Machine<S extends string, E extends string> {
  readonly name: string;
  readonly states: readonly S[];
  readonly events: readonly E[];
  readonly terminal: readonly S[];
  readonly table: TransitionTable<S, E>;
  isTerminal(state: S): boolean;
  /** Pure; never throws. */
  transition(state: S, event: E): TransitionResult<S, E>;
  /** Like `transition`, but a rejected event throws TendError('CONFLICT'). */
  mustTransition(state: S, event: E): { state: S; changed: boolean; absorbed: boolean };
  /** True when `event` is allowed from `state` (terminal states allow nothing; they absorb). */
  can(state: S, event: E): boolean;
  /** Events allowed from `state`, in the machine's event order. */
  eventsFrom(state: S): E[];
  /** Non-terminal states `event` may leave (for compare-and-set in SQL). */
  fromStates(event: E): S[];
}

export interface MachineSpec<S extends string, E extends string> {
  name: string;
  states: readonly S[];
  events: readonly E[];
  terminal: readonly S[];
  table: TransitionTable<S, E>;
}

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

export function defineMachine<S extends string, E extends string>(spec: MachineSpec<S, E>): Machine<S, E> {
  const { name, states, events, terminal, table } = spec;
  const terminalSet = new Set<string>(terminal);
  const stateSet = new Set<string>(states);
  const eventSet = new Set<string>(events);
  // Definition errors are programming errors: fail at import time, not at 3 a.m.
  for (const s of states) {
    if (!has(table, s)) throw new Error(`${name}: state ${s} has no row in the table`);
    // A row value left undefined is no state either: it fails the same check.
    const row = table[s] as Record<string, string>;
    if (terminalSet.has(s) && Object.keys(row).length > 0) throw new Error(`${name}: terminal state ${s} has transitions`);
    for (const [e, to] of Object.entries(row)) {
      if (!eventSet.has(e)) throw new Error(`${name}: unknown event ${e} in row ${s}`);
      if (!stateSet.has(to)) throw new Error(`${name}: ${s} --${e}--> unknown state ${String(to)}`);
    }
  }
  for (const t of terminal) if (!stateSet.has(t)) throw new Error(`${name}: unknown terminal state ${t}`);

  const isTerminal = (state: S): boolean => terminalSet.has(state);

  // Rows hold only known events (checked above) as own properties, so an unknown event finds nothing.
  const next = (state: S, event: E): S | undefined => {
    if (!stateSet.has(state)) return undefined;
    const row = table[state] as Record<string, S | undefined>;
    return has(row, event) ? row[event] : undefined;
  };

  const transition = (state: S, event: E): TransitionResult<S, E> => {
    if (terminalSet.has(state)) return { ok: true, state, changed: false, absorbed: true };
    const to = next(state, event);
    if (to === undefined) {
      const why = !stateSet.has(state)
        ? `unknown ${name} state ${String(state)}`
        : !eventSet.has(event)
          ? `unknown ${name} event ${String(event)}`
          : `${name} cannot ${event} from ${state}`;
      return { ok: false, state, changed: false, absorbed: false, event, message: why };
    }
    return { ok: true, state: to, changed: to !== state, absorbed: false };
  };

  return Object.freeze({
    name,
    states,
    events,
    terminal,
    table,
    isTerminal,
    transition,
    mustTransition(state: S, event: E) {
      const r = transition(state, event);
      if (!r.ok) throw new TendError('CONFLICT', r.message);
      return { state: r.state, changed: r.changed, absorbed: r.absorbed };
    },
    can: (state: S, event: E) => !terminalSet.has(state) && next(state, event) !== undefined,
    eventsFrom: (state: S) => (terminalSet.has(state) ? [] : events.filter((e) => next(state, e) !== undefined)),
    fromStates: (event: E) => states.filter((s) => !terminalSet.has(s) && next(s, event) !== undefined),
  });
}
