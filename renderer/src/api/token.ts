// Browser mode auth: the page is opened at URL/#token=TOKEN. The token moves to sessionStorage
// at once and leaves the address bar (and history), so the hash is free for the router.
const KEY = 'tend.token';

export function takeToken(): string | null {
  const m = /(?:^#|[#&])token=([^&]+)/.exec(location.hash);
  if (m) {
    const token = decodeURIComponent(m[1]!);
    try {
      sessionStorage.setItem(KEY, token);
    } catch {
      /* storage disabled: keep it in memory only */
    }
    history.replaceState(null, '', `${location.pathname}${location.search}#/today`);
    return token;
  }
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}
