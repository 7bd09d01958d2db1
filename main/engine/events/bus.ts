// The engine's bus: every committed event, and every pass report. A listener (SSE, webhooks, the
// MCP server, the app, the daemon's log) runs on its own: one that throws — or returns a promise
// that rejects — is reported and skipped; the others still hear it, and the pass or the operation
// that appended the event never sees the error.
import { EventEmitter } from 'node:events';
import type { PassReport } from '../scheduler/context.js';
import type { EventRow } from '../store/events.js';

export interface EngineEvents {
  /** Every event appended to the logging plane, after its transaction committed. */
  event: [EventRow];
  pass: [PassReport];
}

export type ListenerFault = (err: unknown, name: keyof EngineEvents) => void;

const toStderr: ListenerFault = (err, name) => {
  process.stderr.write(`tend: a listener of ${name} failed (ignored): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
};

export class EventBus extends EventEmitter<EngineEvents> {
  constructor(private readonly onFault: ListenerFault = toStderr) {
    super();
    this.setMaxListeners(100);
  }

  override emit<K extends keyof EngineEvents>(name: K, ...args: EngineEvents[K]): boolean {
    // rawListeners: `once` wrappers included, which remove themselves when called.
    const listeners = this.rawListeners(name) as ((...a: EngineEvents[K]) => unknown)[];
    for (const l of listeners) {
      try {
        const out = l.apply(this, args);
        if (out instanceof Promise) out.catch((err: unknown) => this.fault(err, name));
      } catch (err) {
        this.fault(err, name);
      }
    }
    return listeners.length > 0;
  }

  private fault(err: unknown, name: keyof EngineEvents): void {
    try {
      this.onFault(err, name);
    } catch {
      /* a reporter that fails has nowhere left to report to */
    }
  }
}
