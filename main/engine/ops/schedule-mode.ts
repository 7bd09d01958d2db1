// Switching a schedule between active and observe-only: what the API and `tend schedule mode` do.
// Apart from schedules.ts (import/export, which need a YAML parser), so a daemon loads it alone.
import type { ScheduleMode } from '../domain/types.js';
import { notFound } from '../errors.js';
import type { Store } from '../store/store.js';

export function setScheduleMode(store: Store, name: string, mode: ScheduleMode, now: number): void {
  if (!store.routines.schedule(name)) throw notFound(`schedule ${name}`);
  store.tx(() => {
    store.routines.setScheduleMode(name, mode);
    store.events.append({ type: mode === 'observe' ? 'schedule:observe' : 'schedule:active', message: `schedule ${name} is ${mode === 'observe' ? 'observe-only: status tracked, no commands sent' : 'active'}` }, now);
  });
}
