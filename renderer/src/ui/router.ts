// Hash routes: they work from file:// in Electron and from the daemon in a browser alike.
export type Route =
  | { page: 'today' }
  | { page: 'timeline' }
  | { page: 'routine'; id: string }
  | { page: 'jobs' }
  | { page: 'workers' }
  | { page: 'health' }
  | { page: 'editor'; id: string | null };

export function parseRoute(hash: string): Route {
  const [, head = '', ...rest] = hash.split('/');
  const arg = rest.length ? decodeURIComponent(rest.join('/')) : '';
  switch (head) {
    case 'timeline':
      return { page: 'timeline' };
    case 'routine':
      return arg ? { page: 'routine', id: arg } : { page: 'today' };
    case 'jobs':
      return { page: 'jobs' };
    case 'workers':
      return { page: 'workers' };
    case 'health':
      return { page: 'health' };
    case 'new':
      return { page: 'editor', id: null };
    case 'edit':
      return { page: 'editor', id: arg || null };
    default:
      return { page: 'today' };
  }
}

export const href = {
  today: () => '#/today',
  timeline: () => '#/timeline',
  routine: (id: string) => `#/routine/${encodeURIComponent(id)}`,
  jobs: () => '#/jobs',
  workers: () => '#/workers',
  health: () => '#/health',
  newRoutine: () => '#/new',
  edit: (id: string) => `#/edit/${encodeURIComponent(id)}`,
};
