// The event log as the engine uses it: append now (at the clock's time), publish on the bus once
// committed. The append itself is the store's (store/events.ts), so an operation handed only a
// store — the CLI's, an HTTP call's — writes events that reach the same bus.
import type { Clock } from '../clock.js';
import type { EventRow, NewEvent } from '../store/events.js';
import type { Store } from '../store/store.js';
import { EventBus, type ListenerFault } from './bus.js';

export class EventLog {
  readonly bus: EventBus;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    onFault?: ListenerFault,
  ) {
    this.bus = new EventBus(onFault);
    store.events.onCommitted((row) => this.bus.emit('event', row));
  }

  /** Append to the logging plane; listeners hear it once the surrounding transaction is done. */
  log(e: NewEvent): EventRow {
    return this.store.events.append(e, this.clock.now());
  }

  /** Run `fn` in a write transaction; its events are published after commit (dropped on rollback). */
  tx<T>(fn: () => T): T {
    return this.store.tx(fn);
  }
}
