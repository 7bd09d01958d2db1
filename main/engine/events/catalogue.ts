// Every event the logging plane holds, named once: its type (`noun:verb`), the shape of its data,
// its usual level, and whether it is trouble and of which kind. The contract's pushed event
// types, the desktop notifier and the webhooks read this table instead of keeping lists of their own.
//
// The append (store/events.ts) refuses what this does not describe — an EventShapeError, nothing
// written — in tests and in use alike. The types already make an unknown type or mistyped data a
// compile error at every site (NewEvent is keyed by this table), so what is left is a computed
// value that escaped them: a programming error that a test over that path meets. Refusing keeps
// the log to what its readers (webhooks, notifier, UI) understand; a second behaviour for
// production would be the one never tested.
//
// The shapes are functions of zod, built the first time an event is checked: reading the store
// (`tend daemon status`) loads no validation library, writing to it does.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import type { Level } from '../store/events.js';

/** What the shapes are built of: zod's, or the bundle's share of it (events/event-zod.ts). */
type Zod = Pick<typeof z, 'array' | 'boolean' | 'number' | 'strictObject' | 'string'>;
type Shape = (z: Zod) => z.ZodType<Record<string, unknown>>;

/**
 * What an event says about its routine, for those who tell people about it:
 *   error    the routine's run entered ERROR (failed, could not launch, refused, crash loop, silent)
 *   delayed  a batch run is DELAYED: due, not started within its tolerance
 *   restart  a realtime instance died or went silent, and Tend starts a new one
 */
export type Trouble = 'error' | 'delayed' | 'restart';

export interface EventSpec {
  /** The level it is written at unless the site says otherwise (a requeue after a lost worker is a warning). */
  level: Level;
  /** Its `data`, as a schema built from zod; `null`: it carries none. Data is optional even where there is a shape: a run that reported its own end (an external routine) has no exit status to give. */
  data: Shape | null;
  trouble?: Trouble;
  /** A routine that was in trouble is fine again when this happens (webhooks announce it). */
  recovers?: true;
}

// What a backend reports is typed, not range-checked: a refused event would roll back the settle
// that records the end, and the run would be settled again every pass.
const exit = (z: Zod) => z.strictObject({ exitCode: z.number().nullable(), signal: z.string().nullable() });
const quickDeaths = (z: Zod) => z.strictObject({ exitCode: z.number().nullable(), signal: z.string().nullable(), quickDeaths: z.number().int().nonnegative() });
const count = (z: Zod) => z.number().int().nonnegative();
const delivery = (z: Zod) => z.strictObject({ deliveryId: z.number().int(), webhookId: z.number().int() });

const integrity = (z: Zod) => z.strictObject({ ok: z.boolean(), problems: z.array(z.string()), ms: z.number(), previousPid: z.number().int() });

type Data = EventSpec['data'];
const spec =
  <L extends Level>(level: L) =>
  <D extends Data = null>(data: D = null as D) => ({ level, data });
const info = spec('info');
const warn = spec('warn');
const error = spec('error');

export const CATALOGUE = {
  'routine:created': info(),
  'routine:updated': info(),
  'routine:removed': info(),
  'routine:paused': info(),
  'routine:resumed': info(),
  'routine:cleared': info(),
  'routine:crash-loop': { ...error(quickDeaths), trouble: 'error' },
  'routine:silent': { ...error(), trouble: 'error' },

  'schedule:imported': info((z) => z.strictObject({ schedule: z.string(), created: z.array(z.string()), updated: z.array(z.string()), removed: z.array(z.string()), unchanged: z.array(z.string()) })),
  'schedule:observe': info(),
  'schedule:active': info(),

  'run:requested': info(),
  'run:submitted': info(),
  'run:running': info(),
  'run:completed': { ...info(exit), recovers: true },
  'run:failed': { ...error(exit), trouble: 'error' },
  'run:exited': { ...warn(quickDeaths), trouble: 'restart' },
  'run:stopped': warn(),
  'run:cancelled': warn(),
  'run:delayed': { ...warn(), trouble: 'delayed' },
  'run:retry': warn(),
  'run:skipped': warn(),
  'run:silent': warn(),
  'run:timeout': error(),
  'run:refused': { ...error(), trouble: 'error' },
  'run:launch-failed': { ...error(), trouble: 'error' },
  'run:stop-failed': error(),
  'run:unsent': warn(),

  'job:posted': info(),
  'job:pending': info(),
  'job:submitted': info(),
  'job:fetched': info(),
  'job:running': info(),
  'job:completed': info(exit),
  'job:failed': error(exit),
  'job:cancelled': warn(),
  'job:launch-failed': error(),

  'backend:paused': warn(),
  'backend:resumed': info(),
  'backend:missing': error(),
  'backend:poll-failed': warn(),

  'trigger:misfire': warn((z) => z.strictObject({ missed: count(z), running: count(z), policy: z.string() })),
  'trigger:fault': error(),
  'lease:released': warn(),
  'clock:jump': warn((z) => z.strictObject({ driftMs: z.number().int() })),
  'power:suspend': info(),
  'power:resume': info(),

  'pass:fault': error(),
  'check:fault': error(),
  'submit:fault': error(),
  'api:fault': error(),

  'history:pruned': info((z) => z.strictObject({ at: z.number(), cutoff: z.number(), runs: count(z), jobs: count(z), events: count(z), commands: count(z), reports: count(z), dirs: count(z), more: z.boolean() })),
  'history:failed': warn(),
  'store:checked': info(integrity),
  'store:damaged': error(integrity),

  'webhook:added': info(),
  'webhook:removed': info(),
  'webhook:failed': warn(delivery),
  'webhook:dropped': warn(delivery),
  'webhook:fault': error(),

  'worker:forgotten': warn((z) => z.strictObject({ computer: z.string(), runs: count(z), failedJobs: count(z), requeuedJobs: count(z), expiredCommands: count(z) })),
  'external:log': info(),
} as const satisfies Record<string, EventSpec>;

export type EventType = keyof typeof CATALOGUE;

export const EVENT_TYPES = Object.keys(CATALOGUE) as EventType[];

/** The data an event of type `T` carries (what its schema accepts), or nothing. */
export type EventData<T extends EventType> = (typeof CATALOGUE)[T]['data'] extends Shape ? z.input<ReturnType<(typeof CATALOGUE)[T]['data']>> : never;

let zod: Zod | null = null;
const built = new Map<EventType, z.ZodType<Record<string, unknown>>>();

/**
 * The zod the rest of the process imports, handed over by the module that imports it for every
 * input (domain/schema.ts) as it loads. In the CLI bundle, which holds its own zod
 * (scripts/bundle-cli.mjs), zod from node_modules would be a second copy.
 */
export function shareZod(z: Zod): void {
  zod ??= z;
}

/** A type's data schema, built on first use (zod loads then, synchronously: the append is). */
function schemaOf(type: EventType, shape: Shape): z.ZodType<Record<string, unknown>> {
  let schema = built.get(type);
  if (!schema) {
    // Else the ES module, the zod the engine's modules import (require of an ES module returns
    // its one instance): `require('zod')` resolves to the package's CommonJS build, a second zod
    // of some 100 files held beside the first by every daemon that had appended an event.
    zod ??= requireZod();
    schema = shape(zod);
    built.set(type, schema);
  }
  return schema;
}

function requireZod(): Zod {
  const require = createRequire(import.meta.url);
  try {
    // In the CLI bundle, this resolve is rewritten to the bundle's event-zod.js (scripts/bundle-cli.mjs).
    return (require(fileURLToPath(import.meta.resolve('zod'))) as { z: Zod }).z;
  } catch {
    // Node 20 cannot require an ES module while an import() of it is under way (the first request
    // that validates, loading zod at this very moment): zod's CommonJS build then, a second copy
    // in that rare case rather than an append that fails.
    return (require('zod') as { z: Zod }).z;
  }
}

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(CATALOGUE, type);
}

export function specOf(type: string): EventSpec | null {
  return isEventType(type) ? CATALOGUE[type] : null;
}

/** The trouble an event of this type announces, if any. */
export function troubleOf(type: string): Trouble | null {
  return specOf(type)?.trouble ?? null;
}

export function recovers(type: string): boolean {
  return specOf(type)?.recovers === true;
}

/**
 * Why an event does not match the catalogue: an unknown type, a data shape its type does not
 * have (field and reason), data on a type that carries none. Empty when it matches.
 */
export function eventProblems(e: { type: string; data?: unknown }): string[] {
  const spec = specOf(e.type);
  if (!spec) return [`type ${JSON.stringify(e.type)} is not in the event catalogue (main/engine/events/catalogue.ts)`];
  const data = e.data ?? null;
  if (!spec.data) return data === null ? [] : [`${e.type} carries no data, got ${JSON.stringify(data)}`];
  if (data === null) return [];
  const r = schemaOf(e.type as EventType, spec.data).safeParse(data);
  if (r.success) return [];
  return r.error.issues.map((i) => `${e.type} data${i.path.length ? `.${i.path.map(String).join('.')}` : ''}: ${i.message}`);
}
