// Secure defaults for the window, as data: Electron's security checklist, applied and testable.
import { CSP } from '../engine/api/static.js';

/** The same policy browser mode gets from the daemon (main/engine/api/static.ts). */
export const CONTENT_SECURITY_POLICY = CSP;

export function secureWebPreferences(preload: string) {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  } as const;
}

/** Response headers with the CSP set (any policy the response had is replaced, never loosened). */
export function withCsp(headers: Record<string, string | string[]> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() === 'content-security-policy') continue;
    out[k] = Array.isArray(v) ? v : [v];
  }
  out['Content-Security-Policy'] = [CONTENT_SECURITY_POLICY];
  return out;
}
