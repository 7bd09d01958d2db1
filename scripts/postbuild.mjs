// The CLI entry must be executable for `npm link` and direct invocation.
import { chmodSync, existsSync } from 'node:fs';
const entry = new URL('../dist/main/cli/tend.js', import.meta.url);
if (existsSync(entry)) chmodSync(entry, 0o755);
