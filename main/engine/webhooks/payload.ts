// The JSON body POSTed to receivers. Versioned: fields are only ever added within a version; a
// change in meaning or a removal bumps `version`. Documented in docs/webhooks.md.
import { hostname } from 'node:os';
import type { RoutineDef, RunRow } from '../domain/types.js';
import { collectSecrets, maskText } from '../mask.js';
import { tendVersion } from '../version.js';
import type { WebhookEvent } from './store.js';

export const PAYLOAD_VERSION = 1;

export interface WebhookPayload {
  version: typeof PAYLOAD_VERSION;
  /** Stable for one notice across retries and receivers: deduplicate on it. */
  id: string;
  event: WebhookEvent | 'test';
  /** When it happened (ISO 8601, UTC). */
  at: string;
  /** One line a person can read. */
  message: string;
  routine: { id: string; name: string; schedule: string; kind: 'batch' | 'realtime'; computer: string; external: boolean } | null;
  run: {
    id: string;
    status: string;
    attempt: number;
    scheduledAt: string;
    startedAt: string | null;
    endedAt: string | null;
    durationMs: number | null;
    exitCode: number | null;
    signal: string | null;
    reason: string | null;
    manual: boolean;
  } | null;
  /** The logging-plane event this notice comes from (null for a recovery seen by a check). */
  source: { eventId: number | null; type: string | null };
  tend: { version: string; host: string };
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function buildPayload(n: {
  id: string;
  event: WebhookEvent | 'test';
  at: number;
  message: string;
  def: RoutineDef | null;
  routineId: string | null;
  run: RunRow | null;
  source: { eventId: number | null; type: string | null };
}): WebhookPayload {
  const def = n.def;
  const r = n.run;
  const secrets = def ? collectSecrets(def.args, def.env) : [];
  return {
    version: PAYLOAD_VERSION,
    id: n.id,
    event: n.event,
    at: new Date(n.at).toISOString(),
    message: maskText(n.message, secrets),
    routine: def
      ? { id: def.id, name: def.name, schedule: def.schedule, kind: def.kind, computer: def.computer, external: def.external }
      : n.routineId
        ? { id: n.routineId, name: '', schedule: '', kind: r?.kind ?? 'batch', computer: '', external: false }
        : null,
    run: r
      ? {
          id: r.id,
          status: r.status,
          attempt: r.attempt,
          scheduledAt: new Date(r.scheduledAt).toISOString(),
          startedAt: iso(r.startedAt),
          endedAt: iso(r.endedAt),
          durationMs: r.startedAt !== null && r.endedAt !== null ? r.endedAt - r.startedAt : null,
          exitCode: r.exitCode,
          signal: r.signal,
          reason: r.reason === null ? null : maskText(r.reason, secrets),
          manual: r.manual,
        }
      : null,
    source: n.source,
    tend: { version: tendVersion(), host: hostname() },
  };
}
