// `npm run electron:sqlite` (run by `npm start` and `npm run package`): better-sqlite3 built for
// Electron's ABI, in its own folder (native/electron/), for the desktop app. node_modules'
// better-sqlite3 stays the build npm made for Node (the CLI, the daemon, the tests): the work is
// done on a copy, so nothing here can leave node_modules half-rebuilt. Skipped when stamp.json
// says the binary there was built for this Electron, ABI, platform, arch and better-sqlite3.
// First a prebuilt download (prebuild-install --runtime electron), else node-gyp against
// Electron's headers; both need internet access once.
//
//   node scripts/electron-sqlite.mjs [--out DIR] [--force]
// Mirrors: npm_config_better_sqlite3_binary_host (prebuild-install's own), TEND_ELECTRON_DIST_URL
// (Electron's headers), TEND_ELECTRON_GYP_DIR (where node-gyp keeps them).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'package.json'));
const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const OUT = outAt >= 0 ? resolve(args[outAt + 1]) : join(ROOT, 'native', 'electron');
const force = args.includes('--force');
const say = (line) => console.error(`electron-sqlite: ${line}`);

const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));
const electronPkg = join(ROOT, 'node_modules', 'electron');
const sqlitePkg = join(ROOT, 'node_modules', 'better-sqlite3');
if (!existsSync(join(electronPkg, 'package.json')) || !existsSync(join(sqlitePkg, 'package.json'))) {
  say('node_modules/electron or node_modules/better-sqlite3 is missing: run `npm ci` first');
  process.exit(1);
}
const want = {
  electron: readJson(join(electronPkg, 'package.json')).version,
  abi: readFileSync(join(electronPkg, 'abi_version'), 'utf8').trim(),
  platform: process.platform,
  arch: process.env.TEND_ELECTRON_ARCH || process.arch,
  betterSqlite3: readJson(join(sqlitePkg, 'package.json')).version,
};
const target = `better-sqlite3 ${want.betterSqlite3} for Electron ${want.electron} (NODE_MODULE_VERSION ${want.abi}, ${want.platform}-${want.arch})`;
const binary = join(OUT, 'better_sqlite3.node');
const stampFile = join(OUT, 'stamp.json');

function stampMatches() {
  try {
    const have = readJson(stampFile);
    return existsSync(binary) && Object.keys(want).every((k) => have[k] === want[k]);
  } catch {
    return false;
  }
}

// A binary named explicitly is the one the app loads (main/engine/store/sqlite-binding.ts).
if (!force && outAt < 0 && process.env.TEND_SQLITE_BINDING) {
  if (!existsSync(process.env.TEND_SQLITE_BINDING)) {
    say(`TEND_SQLITE_BINDING: ${process.env.TEND_SQLITE_BINDING} does not exist`);
    process.exit(1);
  }
  say(`TEND_SQLITE_BINDING is set: the app loads ${process.env.TEND_SQLITE_BINDING}; nothing to build`);
  process.exit(0);
}

if (!force && stampMatches()) {
  say(`up to date: ${binary} (${target})`);
  process.exit(0);
}

// npm passes its configuration to scripts as npm_config_*; a machine's `nodedir` (or target,
// runtime, disturl) would make node-gyp build against Node's headers: Node's ABI under an
// Electron name. Only this script's own flags decide what is built.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_(nodedir|target|runtime|disturl|dist_url|arch|build_from_source)$/i.test(k)));

const work = mkdtempSync(join(tmpdir(), 'tend-electron-sqlite-'));
const copy = join(work, 'better-sqlite3');
cpSync(sqlitePkg, copy, { recursive: true, filter: (src) => !src.startsWith(join(sqlitePkg, 'build')) });
const built = join(copy, 'build', 'Release', 'better_sqlite3.node');

function run(what, file, argv, timeoutMs) {
  say(`${what}…`);
  const r = spawnSync(file, argv, { cwd: copy, env, encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status === 0 && existsSync(built)) return null;
  const why = r.error ? r.error.message : r.signal ? `killed by ${r.signal} (timed out?)` : `exit ${r.status}`;
  // The lines that say why (not node-gyp's stack frames and version banner).
  const noise = /^gyp info|ERR! (cwd|node -v|node-gyp -v|not ok|System|command)|ERR! stack\s+at /;
  const tail = output.split('\n').filter((l) => l.trim() && !noise.test(l)).slice(-5).map((l) => `      ${l}`).join('\n');
  return `${why}${tail ? `\n${tail}` : ''}`;
}

function resolveOr(spec, fallback) {
  try {
    return require.resolve(spec);
  } catch {
    return fallback;
  }
}

const failures = [];
const prebuild = resolveOr('prebuild-install/bin.js', null);
const fromPrebuilt = prebuild
  ? run('downloading a prebuilt binary (prebuild-install --runtime electron)', process.execPath, [prebuild, '--runtime', 'electron', '--target', want.electron, '--arch', want.arch, '--platform', want.platform, '--verbose'], 180_000)
  : 'prebuild-install is not installed';
if (fromPrebuilt) {
  failures.push(`prebuilt download (prebuild-install): ${fromPrebuilt}`);
  // npm passes the path of its own node-gyp to scripts.
  const gyp = resolveOr('node-gyp/bin/node-gyp.js', process.env.npm_config_node_gyp || null);
  const devdir = join(process.env.TEND_ELECTRON_GYP_DIR || join(tmpdir(), 'tend-electron-gyp'));
  const fromSource = gyp
    ? run("building from source (node-gyp against Electron's headers)", process.execPath, [gyp, 'rebuild', '--release', `--target=${want.electron}`, `--arch=${want.arch}`, `--dist-url=${process.env.TEND_ELECTRON_DIST_URL || 'https://electronjs.org/headers'}`, `--devdir=${devdir}`], 900_000)
    : 'node-gyp is not installed';
  if (fromSource) failures.push(`build from source (node-gyp): ${fromSource}`);
  else failures.length = 0;
}

if (failures.length) {
  rmSync(work, { recursive: true, force: true });
  say(`could not get ${target}.`);
  for (const f of failures) console.error(`  - ${f}`);
  console.error(
    [
      '  Both ways need internet access (github.com for the prebuilt binary, electronjs.org for the headers);',
      '  a source build also needs Python 3 and a C++ compiler.',
      '  The desktop app cannot open its database without this binary. Fix the cause above and run',
      `  \`npm run electron:sqlite\` again, or set TEND_SQLITE_BINDING to a better_sqlite3.node built for Electron ${want.electron}.`,
      '  node_modules/better-sqlite3 (the build for Node the CLI and the tests use) was not touched.',
    ].join('\n'),
  );
  process.exit(1);
}

// Where Electron itself is installed, load the result under it: proof it is the right ABI.
let electronBinary = null;
try {
  electronBinary = require('electron');
} catch {
  // its binary is downloaded by electron's postinstall; absent, `electron .` fails on its own
}
if (typeof electronBinary === 'string' && existsSync(electronBinary)) {
  const probe = `const D = require(${JSON.stringify(join(sqlitePkg, 'lib', 'index.js'))}); new D(':memory:', { nativeBinding: ${JSON.stringify(built)} }).prepare('select 1').get();`;
  const r = spawnSync(electronBinary, ['-e', probe], { env: { ...env, ELECTRON_RUN_AS_NODE: '1' }, encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) {
    rmSync(work, { recursive: true, force: true });
    say(`the binary built for Electron ${want.electron} does not load under it:\n${(r.stderr || r.error?.message || '').trim()}`);
    process.exit(1);
  }
} else {
  say('Electron itself is not installed here: the binary was not test-loaded');
}

mkdirSync(OUT, { recursive: true });
renameOrCopy(built, `${binary}.tmp`);
renameSync(`${binary}.tmp`, binary);
writeFileSync(stampFile, `${JSON.stringify(want, null, 2)}\n`);
rmSync(work, { recursive: true, force: true });
say(`built ${binary} (${target})`);

function renameOrCopy(from, to) {
  try {
    renameSync(from, to);
  } catch {
    cpSync(from, to);
  }
}
