// Desktop mode: the contract over Electron IPC. Preload exposes a TendBridge as `window.tend`
// (one method per channel, each resolving to a Result, plus `on` for pushed events).
import type { Args, Channel, Push, PushName, Result, Ret, TendBridge } from '../../../contract/calls.js';
import { Emitter, transportError, type ApiClient, type ConnectionState, type FollowHandlers, type LogStream } from './client.js';

const FOLLOW_POLL_MS = 750;
const ACTIVE = new Set(['PENDING', 'DELAYED', 'STARTING', 'RUNNING']);

/** The new text at the end of `next` that `prev` did not have (tails are windows of a growing file). */
export function appendedText(prev: string, next: string): string {
  if (prev === '') return next;
  if (next.startsWith(prev)) return next.slice(prev.length);
  // The window moved forward: `next` is a suffix of `prev` followed by what is new.
  const head = next.slice(0, 64);
  for (let j = prev.indexOf(head); j >= 0; j = prev.indexOf(head, j + 1)) {
    if (next.startsWith(prev.slice(j))) return next.slice(prev.length - j);
  }
  return next;
}

export function createIpcClient(bridge: TendBridge): ApiClient {
  const conn = new Emitter<{ state: ConnectionState }>();
  let state: ConnectionState = 'live';
  let lastPass = Date.now();
  const unsubs: (() => void)[] = [];
  unsubs.push(bridge.on('pass', () => {
    lastPass = Date.now();
    if (state !== 'live') conn.emit('state', (state = 'live'));
  }));
  // IPC does not drop, but an engine that stops passing is worth saying.
  const watchdog = setInterval(() => {
    if (state === 'live' && Date.now() - lastPass > 30_000) conn.emit('state', (state = 'offline'));
  }, 5000);

  async function call<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>> {
    const method = bridge[channel] as unknown as (a: Args<C>) => Promise<Result<Ret<C>>>;
    try {
      return await method(args);
    } catch (err) {
      return transportError('INTERNAL', `IPC call ${channel} failed: ${(err as Error).message}`);
    }
  }

  /** No stream over IPC: poll the tail of the log until the run is over. */
  function follow(runId: string, stream: LogStream, h: FollowHandlers): () => void {
    let stopped = false;
    let seen = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      if (stopped) return;
      const [log, run] = await Promise.all([call('runs.log', { id: runId, stream, tailBytes: 65536 }), call('runs.show', { id: runId })]);
      if (stopped) return;
      if (!log.ok) return h.end(log.error.message);
      const text = appendedText(seen, log.value.text);
      seen = log.value.text;
      if (text) h.chunk(text);
      if (run.ok && !ACTIVE.has(run.value.status)) return h.end('finished');
      timer = setTimeout(() => void tick(), FOLLOW_POLL_MS);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  return {
    kind: 'ipc',
    where: 'desktop app',
    async describe() {
      const r = await bridge['app:info']({}).catch(() => null);
      if (!r?.ok) return 'desktop app';
      return r.value.mode === 'engine' ? `scheduler in this app (pid ${r.value.enginePid})` : `attached to daemon pid ${r.value.enginePid}`;
    },
    call,
    on: <E extends PushName>(event: E, cb: (p: Push[E]) => void) => bridge.on(event, cb),
    onConnection: (cb) => {
      cb(state);
      return conn.on('state', cb);
    },
    follow,
    close() {
      clearInterval(watchdog);
      for (const u of unsubs) u();
    },
  };
}
