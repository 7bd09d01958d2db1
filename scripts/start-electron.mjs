// `npm start` after the build: better-sqlite3 for Electron's ABI (scripts/electron-sqlite.mjs,
// skipped when already there), the Linux sandbox check (scripts/linux-sandbox.mjs), then
// `electron . ARGS` — ARGS being what follows `npm start --`. Its exit code is ours.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { probe, sandboxProblem } from './linux-sandbox.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

const sqlite = spawnSync(process.execPath, [join(ROOT, 'scripts', 'electron-sqlite.mjs')], { stdio: 'inherit' });
if (sqlite.status !== 0) process.exit(sqlite.status ?? 1);

let electron;
try {
  electron = createRequire(join(ROOT, 'package.json'))('electron');
} catch (err) {
  console.error(`tend: Electron is not installed (${err.message.split('\n')[0]}); run \`npm ci\` on a machine that can download it`);
  process.exit(1);
}
const sandboxPath = join(dirname(electron), 'chrome-sandbox');
if (process.platform === 'linux') {
  const problem = sandboxProblem({ platform: process.platform, uid: process.getuid(), args, sandboxPath, ...probe(sandboxPath) });
  if (problem) {
    console.error(`tend: ${problem}`);
    process.exit(1);
  }
}
const child = spawn(electron, [ROOT, ...args], { stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
