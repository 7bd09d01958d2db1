// Which web permissions a page gets: only the app's own page, in its top frame, and only writing
// to the clipboard (Chromium's `clipboard-sanitized-write`, behind navigator.clipboard.writeText:
// the Health page's "Copy the command"). Everything else is refused: notifications come from the
// main process, and nothing else is needed.
import { isTrustedUrl, type TrustedPage } from './ipc.js';

const GRANTED = new Set(['clipboard-sanitized-write']);

export function permissionAllowed(permission: string, requestingUrl: string | null | undefined, mainFrame: boolean, page: TrustedPage): boolean {
  return GRANTED.has(permission) && mainFrame && isTrustedUrl(requestingUrl, page);
}
