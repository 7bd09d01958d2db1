// The API client runs in the browser bundle as well as under Node: what it imports at run time
// must be neither Node's nor the engine's (types are erased; the route table is pure data).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.js';

const CLIENT = ['contract/api-client.ts', 'contract/api-error.ts', 'contract/sse.ts'];
/** The route table, which the client reads at run time (no imports of its own). */
const ROUTE_TABLE = 'contract/routes.ts';

function runtimeImports(file: string): string[] {
  const src = readFileSync(join(REPO, file), 'utf8');
  return [...src.matchAll(/^import\s+(?!type\b)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1]!);
}

describe('the API client', () => {
  it('imports at run time only its own files and the route table', () => {
    for (const file of CLIENT) {
      for (const spec of runtimeImports(file)) {
        const resolved = join(file, '..', spec).replace(/\.js$/, '.ts');
        expect(resolved === ROUTE_TABLE || CLIENT.includes(resolved), `${file} imports ${spec}`).toBe(true);
      }
    }
    expect(runtimeImports(ROUTE_TABLE)).toEqual([]);
  });
});
