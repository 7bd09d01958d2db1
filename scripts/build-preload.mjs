// Bundle the preload into one CommonJS file, dist/preload/preload.cjs. A sandboxed preload cannot
// load ES modules or require files, only 'electron' (and a few Node built-ins): so the channel
// list it reads from contract/routes.ts is inlined here, at build time. Runs after tsc
// (whose own output for preload.cts it replaces).
import { readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
// `--out DIR` builds elsewhere (tests); the default is where the app loads it from.
const outAt = process.argv.indexOf('--out');
const outDir = outAt > 0 && process.argv[outAt + 1] ? resolve(process.argv[outAt + 1]) : fileURLToPath(new URL('../dist/preload', import.meta.url));

await build({
  configFile: false,
  root,
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: false,
    minify: false,
    sourcemap: false,
    target: 'node20',
    copyPublicDir: false,
    lib: { entry: fileURLToPath(new URL('../preload/preload.cts', import.meta.url)), formats: ['cjs'], fileName: () => 'preload.cjs' },
    rollupOptions: { external: ['electron'] },
  },
});

// The sandbox's `require` knows 'electron' and a few built-ins, never a file: check the bundle.
const out = readFileSync(`${outDir}/preload.cjs`, 'utf8');
const required = [...out.matchAll(/\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]);
const stray = required.filter((r) => r !== 'electron');
if (stray.length) {
  console.error(`build-preload: the preload bundle requires ${stray.join(', ')}; a sandboxed preload can only require 'electron'`);
  process.exit(1);
}
// tsc's source map described its own (replaced) output.
rmSync(`${outDir}/preload.cjs.map`, { force: true });
