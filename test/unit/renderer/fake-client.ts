// A stand-in API client for store tests: answers from handlers, records every call, and lets
// the test push engine events.
import type { Args, Channel, EngineEvent, Push, PushName, Result, Ret, RoutineDetail, RoutineSummary } from '../../../contract/calls.js';
import type { ConnectionState } from '../../../renderer/src/api/client.js';

type Handler<C extends Channel> = (args: Args<C>) => Result<Ret<C>> | Promise<Result<Ret<C>>>;

export class FakeClient {
  readonly where = 'test';
  calls: { channel: Channel; args: unknown }[] = [];
  private handlers = new Map<Channel, Handler<never>>();
  private subs = new Map<PushName, Set<(p: unknown) => void>>();
  private connSubs = new Set<(s: ConnectionState) => void>();

  handle<C extends Channel>(channel: C, fn: Handler<C>): this {
    this.handlers.set(channel, fn as unknown as Handler<never>);
    return this;
  }

  async call<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>> {
    this.calls.push({ channel, args });
    const h = this.handlers.get(channel) as Handler<C> | undefined;
    if (!h) return { ok: false, error: { code: 'NOT_FOUND', message: `no handler for ${channel}` } };
    return h(args);
  }

  on<E extends PushName>(event: E, cb: (p: Push[E]) => void): () => void {
    let set = this.subs.get(event);
    if (!set) this.subs.set(event, (set = new Set()));
    set.add(cb as (p: unknown) => void);
    return () => set.delete(cb as (p: unknown) => void);
  }

  onConnection(cb: (s: ConnectionState) => void): () => void {
    this.connSubs.add(cb);
    cb('live');
    return () => this.connSubs.delete(cb);
  }

  push<E extends PushName>(event: E, payload: Push[E]): void {
    for (const cb of this.subs.get(event) ?? []) cb(payload);
  }

  count(channel: Channel): number {
    return this.calls.filter((c) => c.channel === channel).length;
  }

  reset(): void {
    this.calls = [];
  }
}

let nextEventId = 1;
export function event(type: string, o: Partial<EngineEvent> = {}): EngineEvent {
  return { id: nextEventId++, at: Date.now(), type, level: 'info', routineId: null, runId: null, jobId: null, message: type, data: null, ...o };
}

export function summary(id: string, o: Partial<RoutineSummary> = {}): RoutineSummary {
  const path = id.slice(id.indexOf(':') + 1);
  return { id, name: path, schedule: 'default', computer: id.slice(0, id.indexOf(':')), kind: 'batch', external: false, observeOnly: false, trigger: 'scheduled', nextRun: null, retry: null, today: null, lastRun: null, dependencies: [], ...o };
}

export function detail(s: RoutineSummary): RoutineDetail {
  return {
    ...s,
    definition: {
      id: s.id, name: s.name, schedule: s.schedule, computer: s.computer, kind: s.kind, external: s.external, command: 'true', args: [], cwd: null, env: {},
      timing: { mode: 'cron', cron: '0 6 * * *' }, tz: 'UTC', dependencies: s.dependencies, retry: { delayMs: 0, windowMs: 0 }, misfire: 'once', overlap: 'skip',
      timeoutMs: null, heartbeatMs: null, graceMs: 45_000, toleranceMs: 300_000, logCapBytes: 64 * 1024 * 1024, outputs: [], revision: null, backend: 'local',
    },
    triggerState: null,
    nextRuns: [],
    history: [],
    dependents: [],
  };
}

export const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));
