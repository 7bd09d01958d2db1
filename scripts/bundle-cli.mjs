// Bundle the `tend` CLI (and so the daemon, `tend daemon run`) into dist/main/cli/tend.js, with
// chunks/ beside it, one per lazily loaded part (each command still loads only what it runs).
// Runs after tsc, whose own output for main/cli/tend.ts it replaces (as build-preload.mjs does
// for the preload): the entry the README, `npm link`, the desktop package's launcher, service
// units and the tests run is the bundle. A resident daemon holds the source text and module
// records of all it loaded; minified, in a few chunks, an idle daemon holds megabytes less
// (bench `idle`). The desktop app's engine stays tsc's unbundled modules.
//
// CommonJS (dist/main/cli/package.json says so for the bundle's folder): run as an ES module, the
// entry brings Node's ES module loader, and with it node:fs/promises and the readline modules
// that one loads, some 20 of Node's own modules resident in every daemon (bench `idle`, interleaved
// with main: median 55.6 → 54.2 MiB with the fs/promises calls of worker/ made callbacks). Chunks
// loaded lazily are required; import.meta.url is the chunk's own file URL.
//
// Bundled: what the idle daemon and most commands run (the engine, Fastify, zod, commander);
// zod tree-shaken of what Tend never calls (its locales, JSON Schema import), one chunk instead
// of some 100 modules. The event catalogue gets the bundle's zod (events/catalogue.ts shareZod).
// Left outside the bundle, loaded from node_modules as before: better-sqlite3, a native module;
// and what only some commands or requests load (yaml, Fastify's schema compilers, logger and
// inject, cron-parser): bundled, their source would sit in every daemon's memory. The MCP SDK is
// bundled into the chunk of `tend mcp` alone, so its zod is the bundle's too.
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { lazyBuiltinSource } from './lazy-builtin.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = fileURLToPath(new URL('../dist/main/cli/tend.js', import.meta.url));
const outDir = fileURLToPath(new URL('../dist/main/cli', import.meta.url));
const MARK = '// bundled by scripts/bundle-cli.mjs';

if (readFileSync(entry, 'utf8').includes(MARK)) {
  console.error(`bundle-cli: ${entry} is a bundle already; run tsc first (npm run build)`);
  process.exit(1);
}

const EXTERNAL = ['better-sqlite3', 'yaml', 'cron-parser', 'pino', 'light-my-request', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
/**
 * A chunk loaded by a dynamic import is named for its module (chunks/main/cli/commands/daemon.js),
 * so what a process loaded can be read off its file names (test/cli/lazy.test.ts); chunks the
 * others share are chunks/shared/NAME-HASH.js.
 */
function chunkName(chunk) {
  const own = chunk.facadeModuleId;
  if (own?.startsWith(dist) && own.endsWith('.js')) return `chunks/${own.slice(dist.length)}`;
  return 'chunks/shared/[name]-[hash].js';
}

/**
 * Fastify requires node:https and node:http2 as it loads, and uses them only to serve HTTPS or
 * HTTP/2, which the API never does: some 3 MiB of Node's own modules resident for nothing. In
 * the bundle, Fastify's are stand-ins that load the real module on first use
 * (scripts/lazy-builtin.mjs). So is the node:assert of Fastify and its router (find-my-way),
 * whose every use is `assert(condition, message)` as routes are added: the stand-in lets a true
 * condition pass, and hands a false one to the real assert, which throws its AssertionError as
 * before (five of Node's modules an idle daemon no longer holds). Not node:dns: Node's own
 * listen() loads it, even for an address.
 */
const LAZY_BUILTINS = ['node:https', 'node:http2', 'node:assert'];
const LAZY_IMPORTERS = /[\\/]node_modules[\\/](fastify|find-my-way)[\\/]/;
const lazyBuiltins = {
  name: 'lazy-builtins',
  resolveId(id, importer) {
    if (LAZY_BUILTINS.includes(id) && importer && LAZY_IMPORTERS.test(importer)) return `\0lazy:${id}`;
    return null;
  },
  load(id) {
    return id.startsWith('\0lazy:') ? lazyBuiltinSource(id.slice('\0lazy:'.length)) : null;
  },
};

/**
 * better-sqlite3 is CommonJS: imported from an ES module, Node reads its exports with its
 * CommonJS lexer (a module of its own, some 90 KB of source) before the daemon opens a database.
 * The bundle requires it instead; its default export is the same module.exports.
 */
const REQUIRED_DEFAULT = ['better-sqlite3'];
const requiredDefault = {
  name: 'required-default',
  resolveId(id, importer) {
    if (REQUIRED_DEFAULT.includes(id) && importer && !importer.startsWith('\0required:')) return `\0required:${id}`;
    return null;
  },
  load(id) {
    if (!id.startsWith('\0required:')) return null;
    return `import { createRequire } from 'node:module';\nexport default createRequire(import.meta.url)(${JSON.stringify(id.slice('\0required:'.length))});\n`;
  },
};

/**
 * zod loads with the first request that validates (api/lazy.ts), yet an event's data is checked
 * as it is appended, synchronously (events/catalogue.ts), perhaps before any such request. The
 * catalogue then requires zod; in the bundle what it requires is the entry event-zod.js, which
 * shares the one zod chunk with the routes', instead of zod from node_modules (a second copy).
 * The path is relative to the chunk the catalogue lands in, known once chunks are named.
 */
const EVENT_ZOD = 'event-zod.js';
const EVENT_ZOD_MARK = '__tend_event_zod__';
const eventZod = {
  name: 'event-zod',
  transform(code, id) {
    if (!id.endsWith(`${join('main', 'engine', 'events', 'catalogue.js')}`)) return null;
    const from = "fileURLToPath(import.meta.resolve('zod'))";
    if (!code.includes(from)) throw new Error(`bundle-cli: ${id} no longer resolves zod as ${from}`);
    return code.replace(from, `fileURLToPath(new URL(${JSON.stringify(EVENT_ZOD_MARK)}, import.meta.url))`);
  },
  renderChunk(code, chunk) {
    if (!code.includes(EVENT_ZOD_MARK)) return null;
    const to = posix.relative(posix.dirname(chunk.fileName), EVENT_ZOD);
    return code.replaceAll(EVENT_ZOD_MARK, to.startsWith('.') ? to : `./${to}`);
  },
};

rmSync(`${outDir}/chunks`, { recursive: true, force: true });
rmSync(`${outDir}/package.json`, { force: true });
await build({
  cwd: root,
  input: { tend: entry, [EVENT_ZOD.replace(/\.js$/, '')]: fileURLToPath(new URL('../dist/main/engine/events/event-zod.js', import.meta.url)) },
  platform: 'node',
  // A built-in named without `node:` is still a built-in (Fastify's dependencies name some so).
  external: (id) => (id.startsWith('node:') && !LAZY_BUILTINS.includes(id)) || (!REQUIRED_DEFAULT.includes(id) && EXTERNAL.some((e) => id === e || id.startsWith(`${e}/`))),
  plugins: [lazyBuiltins, requiredDefault, eventZod],
  logLevel: 'warn',
  output: {
    dir: outDir,
    format: 'cjs',
    minify: true,
    // One character past Latin-1 makes V8 hold a whole chunk's source as two bytes a character.
    charset: 'ascii',
    postBanner: (chunk) => (chunk.isEntry && chunk.name === 'tend' ? MARK : ''),
    entryFileNames: '[name].js',
    chunkFileNames: chunkName,
    // zod in a chunk of its own (chunks/shared/zod-HASH.js): what loaded it can be read off the name.
    codeSplitting: { groups: [{ name: 'zod', test: /[\\/]node_modules[\\/]zod[\\/]/ }] },
  },
});
// tsc's source map described its own (replaced) output.
rmSync(`${entry}.map`, { force: true });
// The bundle's folder is CommonJS; tsc's ES modules beside it (commands/, io.js …) are loaded by nobody.
writeFileSync(`${outDir}/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
chmodSync(entry, 0o755);
