// The preload script: sandboxed, so CommonJS and bundled into one file (dist/preload/preload.cjs,
// by scripts/build-preload.mjs) that requires nothing but 'electron'. It exposes `window.tend`
// (see preload/contract.ts, TendBridge) and nothing else.
import electron = require('electron');
import bridge = require('./bridge.js');

electron.contextBridge.exposeInMainWorld('tend', bridge.buildBridge(electron.ipcRenderer));
