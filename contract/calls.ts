// The typed contract between the UI and the engine: every call (`Invoke`) and every pushed event
// (`Push`). TYPES ONLY — this module emits nothing at runtime. The channel list at runtime is
// `Object.keys(ROUTES)` (contract/routes.ts); inputs are validated by INPUTS
// (main/engine/api/methods.ts) at every boundary, results are what `makeMethods` returns.
//
// Transports implementing it:
// - HTTP + server-sent events (browser mode): renderer/src/api/http.ts, over the API's one client
//   (contract/api-client.ts), which the app attached to a daemon, the remote worker and MCP use too
// - Electron IPC: main registers one `handle(channel, fn)` per channel; preload exposes a
//   `TendBridge` as `window.tend` (one method per channel, plus `on`); renderer/src/api/ipc.ts.
// The worker protocol (what `tend worker` and `tend report` send and are answered), with the
// schemas both sides validate with: contract/worker-protocol.ts.
import type { z } from 'zod';
import type { Channel, ROUTES } from './routes.js';
import type { INPUTS, Methods } from '../main/engine/api/methods.js';
import type { Issue, ErrorCode } from '../main/engine/errors.js';
import type { EventType } from '../main/engine/events/catalogue.js';
import type { EventRow } from '../main/engine/store/events.js';
import type { PassReport } from '../main/engine/scheduler/context.js';
import type { JobRow, JobStatus, RoutineDef, RunStatus, Schedule, TriggerRow, Timing } from '../main/engine/domain/types.js';
import type { RoutineDetail, RoutineSummary, RunSummary } from '../main/engine/ops/views.js';
import type { DaemonStatus } from '../main/engine/daemon/status.js';
import type { Finding, Severity } from '../main/engine/daemon/doctor.js';
import type { RoutineInput } from '../main/engine/domain/schema.js';
import type { JobInput } from '../main/engine/ops/jobs.js';

export type { Channel, Issue, ErrorCode, EventRow, PassReport, JobRow, JobStatus, RoutineDef, RunStatus, Schedule, TriggerRow, Timing };
export type { RoutineDetail, RoutineSummary, RunSummary, DaemonStatus, Finding, Severity, RoutineInput, JobInput };

/** A worker host as `workers.list` returns it (the SQL row, typed here). */
export interface WorkerRow {
  computer: string;
  version: string | null;
  slots: number | null;
  running: number | null;
  lastSeen: number | null;
  registeredAt: number | null;
  /** Heard from within TEND_WORKER_OFFLINE_MS (30 s): the one rule the scheduler uses too. */
  online: boolean;
}

/** Results the method table cannot type by itself (raw SQL rows). */
interface ResultOverrides {
  'workers.list': WorkerRow[];
}

/** What a channel takes: the input side of its shared schema. */
export type Args<C extends Channel> = z.input<(typeof INPUTS)[C]>;

/** What a channel returns, once awaited. */
export type Ret<C extends Channel> = C extends keyof ResultOverrides ? ResultOverrides[C] : Awaited<ReturnType<Methods[C]>>;

/** channel → (args) ⇒ result. Every transport of the renderer's API client implements this. */
export type Invoke = { [C in Channel]: (args: Args<C>) => Promise<Ret<C>> };

/** How errors cross every boundary: as values, never thrown across IPC or HTTP. */
export interface ResultError {
  code: ErrorCode | 'INTERNAL' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'BAD_REQUEST' | 'NETWORK';
  message: string;
  issues?: Issue[];
}
export type Result<T> = { ok: true; value: T } | { ok: false; error: ResultError };

/** Every engine event type: the keys of the event catalogue (main/engine/events/catalogue.ts), the one list. */
export type EngineEventType = EventType;

/**
 * An event of the logging plane as pushed: one of the catalogue's types, or (a row an older Tend
 * wrote, kept in the history) one since retired, still `noun:verb`.
 */
export type EngineEvent = Omit<EventRow, 'type'> & { type: EngineEventType | (string & {}) };

/** event → payload: what the engine pushes to the UI. */
export interface Push {
  /** Every event appended to the logging plane. */
  event: EngineEvent;
  /** A pass of the scheduler finished (also the daemon's heartbeat). */
  pass: PassReport;
}
export type PushName = keyof Push;

/** Where the desktop app's engine runs (main/app/host.ts answers it; not an engine channel). */
export interface AppInfo {
  /** 'engine': the scheduler runs inside the app; 'attached': a headless daemon runs it. */
  mode: 'engine' | 'attached';
  dataDir: string;
  /** The HTTP API (browser mode), when there is one. */
  url: string | null;
  enginePid: number;
  version: string;
}

/** Calls of the desktop app itself, outside the engine's contract. */
export interface AppCalls {
  'app:info': (args?: Record<string, never>) => Promise<Result<AppInfo>>;
}

/**
 * What preload exposes as `window.tend` (contextBridge): one method per contract channel, each
 * resolving to a `Result` (never rejecting with engine errors), the app's own calls, and `on` for
 * pushed events, which returns its unsubscribe function. Nothing else — never `ipcRenderer`.
 */
export type TendBridge = { [C in Channel]: (args: Args<C>) => Promise<Result<Ret<C>>> } & AppCalls & {
  on<E extends PushName>(event: E, cb: (payload: Push[E]) => void): () => void;
};

/** The HTTP routes of the contract, for reference from the type side. */
export type Routes = typeof ROUTES;
