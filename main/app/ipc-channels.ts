// The IPC surface as data, shared by main (handlers) and preload (the bridge). Pure: the preload
// bundle inlines this module and the route table it reads, and requires nothing but 'electron'.
import { ROUTES, type Channel } from '../../contract/routes.js';

/** Every contract call: exactly the HTTP API's channels. */
export const CONTRACT_CHANNELS = Object.freeze(Object.keys(ROUTES)) as readonly Channel[];

/** Calls of the desktop app itself, outside the engine's contract. */
export const APP_CHANNELS = Object.freeze(['app:info'] as const);
export type AppChannel = (typeof APP_CHANNELS)[number];

export type IpcChannel = Channel | AppChannel;

/** What `app:info` answers: the contract's AppInfo (how this app reaches its engine). */
export type { AppInfo } from '../../contract/calls.js';

/** Every channel main handles and preload exposes, one method each. */
export const IPC_CHANNELS: readonly IpcChannel[] = Object.freeze([...CONTRACT_CHANNELS, ...APP_CHANNELS]);

/** Pushed events (the contract's `Push`): engine events and passes. */
export const PUSH_EVENTS = Object.freeze(['event', 'pass'] as const);
export type PushEvent = (typeof PUSH_EVENTS)[number];

/** The IPC channel main sends a pushed event on. */
export const pushChannel = (event: PushEvent): string => `tend:push:${event}`;
