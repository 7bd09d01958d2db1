// Files the app loads, located from this module: dist/main/app/ → the app root (the project in
// development, the asar in a package), which holds dist/renderer, dist/preload and resources/.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TrayColour } from './tray-model.js';
import type { TrustedPage } from './ipc.js';

export interface AppAssets {
  root: string;
  preload: string;
  rendererDir: string;
  rendererIndex: string;
  trayIcon(colour: TrayColour): string;
  appIcon: string;
}

export function appAssets(root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')): AppAssets {
  const rendererDir = join(root, 'dist', 'renderer');
  return {
    root,
    preload: join(root, 'dist', 'preload', 'preload.cjs'),
    rendererDir,
    rendererIndex: join(rendererDir, 'index.html'),
    // `tray-green.png` with `tray-green@2x.png` beside it: Electron picks the one for the display.
    trayIcon: (colour) => join(root, 'resources', 'tray', `tray-${colour}.png`),
    appIcon: join(root, 'resources', 'icon.png'),
  };
}

/** The page to load: the built renderer (for UI work with a dev server, use browser mode). */
export function rendererPage(assets: AppAssets): TrustedPage {
  return { kind: 'file', indexFile: assets.rendererIndex };
}

export function rendererBuilt(assets: AppAssets): boolean {
  return existsSync(assets.rendererIndex);
}
