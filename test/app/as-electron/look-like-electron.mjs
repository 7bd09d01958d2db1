// `node --import` this to make a Node process look like Electron's main process to Tend:
// process.versions.electron is set; loading the better-sqlite3 npm built for Node fails the way
// Electron's loader fails on a module of another ABI (and is recorded); and, when the test names
// one, process.execPath is a stand-in for the app binary (a script that runs Node only with
// ELECTRON_RUN_AS_NODE=1 and otherwise records that a second app would have started).
import { appendFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const nodeAbiDir = realpathSync(join(here, '..', '..', '..', 'node_modules', 'better-sqlite3')) + sep;
const record = process.env.TEND_FAKE_ELECTRON_RECORD;
const note = (line) => record && appendFileSync(record, `${line}\n`);

Object.defineProperty(process.versions, 'electron', { value: '45.5.0', enumerable: true, configurable: true });

const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  let real = filename;
  try {
    real = realpathSync(filename);
  } catch {
    // dlopen reports it
  }
  if (real.startsWith(nodeAbiDir)) {
    note(`node-abi-load ${process.pid} ${real}`);
    const err = new Error(
      `The module '${filename}'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION ${process.versions.modules}. This version of Node.js requires\nNODE_MODULE_VERSION 150. Please try re-compiling or re-installing\nthe module (for instance, using \`npm rebuild\` or \`npm install\`).`,
    );
    err.code = 'ERR_DLOPEN_FAILED';
    throw err;
  }
  return dlopen.call(this, module, filename, ...rest);
};

if (process.env.TEND_FAKE_ELECTRON_EXEC) process.execPath = process.env.TEND_FAKE_ELECTRON_EXEC;
