import type { RoutineDef, Schedule } from '../domain/types.js';
import type { Store } from '../store/store.js';

/** Definitions cached in memory, reloaded only when `defs_version` moves. */
export class Definitions {
  version = -1;
  byId = new Map<string, RoutineDef>();
  schedules = new Map<string, Schedule>();
  realtime: RoutineDef[] = [];

  refresh(store: Store): void {
    const v = store.routines.defsVersion();
    if (v === this.version) return;
    this.byId = new Map(store.routines.allDefs().map((d) => [d.id, d]));
    this.schedules = new Map(store.routines.schedules().map((s) => [s.name, s]));
    this.realtime = [...this.byId.values()].filter((d) => d.kind === 'realtime');
    this.version = v;
  }

  observeOnly(def: RoutineDef): boolean {
    return this.schedules.get(def.schedule)?.mode === 'observe';
  }
}
