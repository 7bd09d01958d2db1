// Action tools act through the daemon that owns the data dir, over its HTTP API with the token
// in api.json: the owner does the work (stopping its jobs, nudging its loop), exactly as when the
// UI's buttons are pressed. Without a live daemon serving its API, actions are refused.
import { createApi } from '../../../contract/api-client.js';
import { readApiFile } from '../api/auth.js';
import type { Channel } from '../../../contract/routes.js';
import { ownerPid } from '../daemon/nudge.js';
import { TendError } from '../errors.js';

export async function daemonCall<T = unknown>(dataDir: string, channel: Channel, args: Record<string, unknown>, timeoutMs = 60_000): Promise<T> {
  const pid = ownerPid(dataDir);
  if (pid === null) {
    throw new TendError('UNAVAILABLE', 'no daemon owns the data dir, so nothing was done: actions go through the daemon that does the work. Start one with `tend daemon ensure`, then try again.');
  }
  const api = readApiFile(dataDir);
  if (!api || api.pid !== pid) {
    throw new TendError('UNAVAILABLE', `daemon ${pid} owns the data dir but serves no API (TEND_API=off?), so nothing was done`);
  }
  // The API's one client: a refusal keeps the daemon's own code, message and issues.
  const client = createApi({ base: api.url, token: api.token, timeoutMs, unreachableHint: 'nothing is known to have been done' });
  return (await client.call(channel, args as never)) as T;
}
