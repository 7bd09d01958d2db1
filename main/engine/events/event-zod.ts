// The part of zod the event catalogue's shapes are built of (events/catalogue.ts). In the CLI
// bundle this is an entry of its own (dist/main/cli/event-zod.js, scripts/bundle-cli.mjs): the
// catalogue requires it when an event is checked before any route has loaded zod, and gets the
// bundle's one zod (an import of this module and a require of it share one instance).
import { z as zod } from 'zod';

/** Named `z`, as zod's own module exports it: the catalogue reads `.z` of either. */
export const z = { array: zod.array, boolean: zod.boolean, number: zod.number, strictObject: zod.strictObject, string: zod.string };
