// Every call of the typed contract and its HTTP route. Pure data, no imports: the server, the
// OpenAPI document and the browser transport all read this one table.

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Who may call: an admin token (the UI, the CLI), a worker token (its own computer), or anyone. */
export type Scope = 'admin' | 'worker' | 'public';

export interface RouteSpec {
  method: HttpMethod;
  path: string;
  scope: Scope;
  summary: string;
}

export const ROUTES = {
  'routines.list': { method: 'GET', path: '/api/routines', scope: 'admin', summary: "Routines with trigger state, next run and today's status" },
  'routines.show': { method: 'GET', path: '/api/routines/:id', scope: 'admin', summary: 'One routine: definition (secrets masked), trigger, next runs, history, dependents' },
  'routines.create': { method: 'POST', path: '/api/routines', scope: 'admin', summary: 'Define a routine' },
  'routines.edit': { method: 'PUT', path: '/api/routines/:id', scope: 'admin', summary: 'Change a routine: only the given fields change' },
  'routines.remove': { method: 'DELETE', path: '/api/routines/:id', scope: 'admin', summary: 'Delete a definition (its history stays)' },
  'routines.pause': { method: 'POST', path: '/api/routines/:id/pause', scope: 'admin', summary: 'Exclude from due runs' },
  'routines.resume': { method: 'POST', path: '/api/routines/:id/resume', scope: 'admin', summary: 'Schedule again, timing recomputed from now' },
  'routines.clear': { method: 'POST', path: '/api/routines/:id/clear', scope: 'admin', summary: 'Drop trigger state and failure metadata' },
  'routines.run': { method: 'POST', path: '/api/routines/:id/run', scope: 'admin', summary: 'Run now (batch) or start (realtime)' },
  'routines.restart': { method: 'POST', path: '/api/routines/:id/restart', scope: 'admin', summary: 'Stop, then start, as one operation' },
  'routines.stop': { method: 'POST', path: '/api/routines/:id/stop', scope: 'admin', summary: 'Stop running instances: TERM, then KILL after the grace period' },
  'timing.preview': { method: 'POST', path: '/api/timing/preview', scope: 'admin', summary: 'The next instants a timing fires (the editor preview)' },
  'schedules.list': { method: 'GET', path: '/api/schedules', scope: 'admin', summary: 'Schedules and their mode' },
  'schedules.setMode': { method: 'POST', path: '/api/schedules/:name/mode', scope: 'admin', summary: 'Active, or observe-only (status tracked, no commands sent)' },
  'jobs.list': { method: 'GET', path: '/api/jobs', scope: 'admin', summary: 'One-off batch jobs' },
  'jobs.show': { method: 'GET', path: '/api/jobs/:id', scope: 'admin', summary: 'One batch job' },
  'jobs.post': { method: 'POST', path: '/api/jobs', scope: 'admin', summary: 'Post a batch job' },
  'jobs.cancel': { method: 'POST', path: '/api/jobs/:id/cancel', scope: 'admin', summary: 'Cancel a batch job' },
  'runs.list': { method: 'GET', path: '/api/runs', scope: 'admin', summary: "Runs of a day (default today), for the timeline" },
  'runs.show': { method: 'GET', path: '/api/runs/:id', scope: 'admin', summary: 'One run with its manifest' },
  'runs.log': { method: 'GET', path: '/api/runs/:id/log', scope: 'admin', summary: "The tail of a run's stdout or stderr" },
  'workers.list': { method: 'GET', path: '/api/workers', scope: 'admin', summary: 'Worker hosts: last seen, version, slots, running jobs' },
  'workers.forget': { method: 'POST', path: '/api/workers/:computer/forget', scope: 'admin', summary: 'Forget a worker host gone for good: its runs end unknown, claimed jobs requeue, its token stops working' },
  'daemon.status': { method: 'GET', path: '/api/daemon/status', scope: 'admin', summary: 'Ownership, heartbeat, queue counts, next due work, recent failures' },
  'daemon.doctor': { method: 'GET', path: '/api/daemon/doctor', scope: 'admin', summary: 'Actionable findings' },
  'events.recent': { method: 'GET', path: '/api/events/recent', scope: 'admin', summary: 'Recent events of the logging plane' },
} as const satisfies Record<string, RouteSpec>;

export type Channel = keyof typeof ROUTES;

/** Routes outside the contract (streams, documents). */
export const EXTRA_ROUTES = {
  health: { method: 'GET', path: '/health', scope: 'public', summary: 'Liveness, no token needed' },
  events: { method: 'GET', path: '/api/events', scope: 'admin', summary: 'Server-sent events: every engine event as it happens' },
  follow: { method: 'GET', path: '/api/runs/:id/log/follow', scope: 'admin', summary: "Server-sent events: a run's output as it is written" },
  openapi: { method: 'GET', path: '/api/openapi.json', scope: 'admin', summary: 'This API, as OpenAPI 3.1' },
} as const satisfies Record<string, RouteSpec>;

/** Fill `:param` placeholders; the rest of the args go to the query (GET/DELETE) or the body. */
export function buildRequest(channel: Channel, args: Record<string, unknown>): { method: HttpMethod; url: string; body?: Record<string, unknown> } {
  const spec: RouteSpec = ROUTES[channel];
  const rest: Record<string, unknown> = { ...args };
  const url = spec.path.replace(/:(\w+)/g, (_, name: string) => {
    const v = rest[name];
    delete rest[name];
    return encodeURIComponent(String(v));
  });
  if (spec.method === 'GET' || spec.method === 'DELETE') {
    const q = Object.entries(rest)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    return { method: spec.method, url: q ? `${url}?${q}` : url };
  }
  return { method: spec.method, url, body: rest };
}
