// The backends the pass reaches: those it was given, those made when first met (a worker pool
// backend per remote computer), which of them the health gate has paused, and a deadline on every
// call so one hung backend cannot stall the loop.
import type { Backend } from '../backend.js';
import type { RoutineDef } from '../domain/types.js';

export class BackendSet {
  /** Backends paused by the health gate, with why (reported once per transition). */
  readonly paused = new Map<string, string>();

  constructor(
    private readonly known: Map<string, Backend>,
    /** This host's computer: its routines run on their own backend. */
    private readonly computer: string,
    private readonly timeoutMs: number | undefined,
    private readonly make: ((name: string) => Backend | undefined) | null = null,
  ) {}

  get(name: string): Backend | undefined {
    let b = this.known.get(name);
    if (!b && this.make) {
      b = this.make(name);
      if (b) this.known.set(name, b);
    }
    return b;
  }

  /** Routines of this host run on their own backend; those of other computers go to the pool. */
  nameFor(def: RoutineDef): string {
    return def.computer === this.computer ? def.backend : `pool:${def.computer}`;
  }

  /** A backend call with a deadline: a hung backend becomes a failed call, not a stalled loop. */
  bounded<T>(p: Promise<T>, what: string): Promise<T> {
    const ms = this.timeoutMs;
    if (ms === undefined) return p;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }
}
