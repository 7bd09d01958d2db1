// The IPC handler table: one handler per contract channel (plus the app's own), each validating
// its argument with the shared schema and answering with a value, `{ok:true,value}` or
// `{ok:false,error}` — never a throw across IPC. And who may call: only the app's own page.
import { pathToFileURL } from 'node:url';
import { INPUTS } from '../engine/api/methods.js';
import type { Channel } from '../../contract/routes.js';
import { zodIssues } from '../engine/domain/schema.js';
import { invalid } from '../engine/errors.js';
import { toResult, type CallResult, type TendClient } from './client.js';
import { CONTRACT_CHANNELS, type AppInfo, type IpcChannel } from './ipc-channels.js';

export type IpcHandler = (args: unknown) => Promise<CallResult>;
export type IpcTable = Record<IpcChannel, IpcHandler>;

export interface IpcTableDeps {
  /** The current client: it changes when an attached app takes over from a daemon that left. */
  client(): TendClient;
  info(): AppInfo;
}

/** Validate with the channel's shared schema, then call. */
export async function callChecked(client: TendClient, channel: Channel, args: unknown): Promise<CallResult> {
  const parsed = INPUTS[channel].safeParse(args ?? {});
  if (!parsed.success) return toResult(invalid(zodIssues(parsed.error)));
  try {
    return { ok: true, value: await client.call(channel, args ?? {}) };
  } catch (err) {
    return toResult(err);
  }
}

export function ipcTable(d: IpcTableDeps): IpcTable {
  const table = {} as IpcTable;
  for (const channel of CONTRACT_CHANNELS) table[channel] = (args) => callChecked(d.client(), channel, args);
  table['app:info'] = async (args) => {
    if (args !== undefined && args !== null && !(typeof args === 'object' && !Array.isArray(args) && Object.keys(args).length === 0)) {
      return toResult(invalid({ path: '', message: 'app:info takes no arguments' }));
    }
    return { ok: true, value: d.info() };
  };
  return table;
}

/**
 * The page the app loads: the built renderer file, only. (A dev-server URL is not offered: the
 * page's CSP — script-src 'self', no inline scripts — refuses what a dev server injects.)
 */
export type TrustedPage = { kind: 'file'; indexFile: string };

/** A sender is trusted when it is the app's own page, whatever its hash (the router lives there). */
export function isTrustedUrl(url: string | undefined | null, page: TrustedPage): boolean {
  if (!url) return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const expected = pathToFileURL(page.indexFile);
  return u.protocol === 'file:' && u.host === expected.host && decodeURIComponent(u.pathname) === decodeURIComponent(expected.pathname);
}

/** What an IPC event says about its sender (Electron's `senderFrame`, reduced to data). */
export interface SenderInfo {
  url: string | null | undefined;
  /** The main frame of its page, not an iframe. */
  topFrame: boolean;
  /** Sent by the app's own window. */
  ownWindow: boolean;
}

export function senderAllowed(s: SenderInfo, page: TrustedPage): boolean {
  return s.ownWindow && s.topFrame && isTrustedUrl(s.url, page);
}

export const REFUSED_SENDER: CallResult = { ok: false, error: { code: 'FORBIDDEN', message: 'IPC from an untrusted sender' } };
