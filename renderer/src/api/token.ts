// Browser mode auth: the page is opened at URL/#token=TOKEN. The token moves to sessionStorage
// at once and leaves the address bar (and history), so the hash is free for the router. A
// corrected address pasted into the same tab (a hashchange, no reload) hands the new token over.
const KEY = 'tend.token';

/** A token in the address's fragment, taken out of it (and kept for this tab), or null. */
function fromHash(): string | null {
  const m = /(?:^#|[#&])token=([^&]+)/.exec(location.hash);
  if (!m) return null;
  const token = decodeURIComponent(m[1]!);
  try {
    sessionStorage.setItem(KEY, token);
  } catch {
    /* storage disabled: keep it in memory only */
  }
  history.replaceState(null, '', `${location.pathname}${location.search}#/today`);
  return token;
}

export function takeToken(): string | null {
  const token = fromHash();
  if (token) return token;
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** Call `cb` with each token that arrives in the fragment later (the page is not reloaded). */
export function watchToken(cb: (token: string) => void): () => void {
  const onHash = () => {
    const token = fromHash();
    if (token) cb(token);
  };
  window.addEventListener('hashchange', onHash);
  return () => window.removeEventListener('hashchange', onHash);
}
