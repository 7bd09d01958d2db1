// Builds the renderer to dist/renderer: served by the daemon in browser mode, loaded from the
// asar by the Electron window. Relative asset paths work for both (http:// and file://).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // One small app: a single chunk loads faster than a waterfall (and keeps the CSP simple).
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
  },
  server: { strictPort: false },
  logLevel: 'warn',
});
