// Tend's root: the directory holding its package.json (the repository, or app.asar in a
// package), found by walking up from this module. Files Tend ships (the CLI entry, the built
// renderer, the Electron SQLite build) are named from it, so a path is the same whether the code
// runs from tsc's output, from the CLI bundle (dist/main/cli/chunks, scripts/bundle-cli.mjs) or
// from the TypeScript sources: each sits at a different depth.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function appRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | null {
  let dir = from;
  for (let i = 0; i < 8; i++) {
    try {
      if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name === 'tend') return dir;
    } catch {
      // not here
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

let found: string | null | undefined;

/** appRoot() of this module, looked up once. */
function root(): string {
  found ??= appRoot();
  if (!found) throw new Error(`Tend's package.json was not found above ${fileURLToPath(import.meta.url)}`);
  return found;
}

/** The `tend` entry (the CLI bundle): what daemons and service units are started with. */
export function cliEntry(): string {
  return join(root(), 'dist', 'main', 'cli', 'tend.js');
}

/** Where the build puts the renderer (served in browser mode once built). */
export function builtRendererDir(): string {
  return join(root(), 'dist', 'renderer');
}
