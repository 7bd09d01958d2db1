// One `measure` of bench/pass.ts in a process of its own, for V8 flags that must be set at start
// (the daemon's: bench pass's largeDaemonFlags). Args: routines, due per pass, passes; prints JSON.
import { measure } from './pass.js';

const [total, due, passes] = process.argv.slice(2).map(Number);
process.stdout.write(`${JSON.stringify(await measure(total!, due!, passes!))}\n`);
