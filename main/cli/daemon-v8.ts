// First of the entry's imports, so it runs before the rest of the CLI is even evaluated: a `tend
// daemon run` takes its V8 flags (engine/daemon/v8-flags.ts) before any function gets hot enough
// for the optimizing compiler (loading the CLI alone made node's path functions so), whose one
// use keeps megabytes resident.
import { applyDaemonV8Flags } from '../engine/daemon/v8-flags.js';

if (process.argv[2] === 'daemon' && process.argv[3] === 'run') applyDaemonV8Flags();
