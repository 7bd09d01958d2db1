// The worker's side of the HTTP API (the worker agent and `tend report`): the API's one client
// (contract/api-client.ts) with the worker's bearer token. Failures are ApiErrors with the
// server's own code: FORBIDDEN for a token of another computer, UNAUTHORIZED for a token the
// server does not know, CONFLICT for a report that contradicts what it knows, and so on.
import { createApi, type Api } from '../../contract/api-client.js';

export function workerApi(server: string, token: string, fetchImpl?: typeof fetch): Api {
  return createApi({
    base: server,
    token,
    fetch: fetchImpl,
    // "fetch failed" says nothing: name what to check.
    unreachableHint: 'check that the daemon runs there (tend daemon status on its host) and that the address (--server, TEND_SERVER) is right',
  });
}
