/** Hash routes of the app, parsed and printed (pure). */

/** What `#/lab?…` asks the lab to open: a share code (`s`), a lesson id or a template id. */
export interface LabQuery {
  s?: string;
  lesson?: string;
  template?: string;
}

export type Route =
  | { name: 'home' }
  | { name: 'lesson'; id: string; step: number }
  | { name: 'lab'; query?: LabQuery }
  | { name: 'interview' }
  | { name: 'retry' }
  | { name: 'interview-drill' }
  | { name: 'senior-topic'; id: string }
  | { name: 'track'; id: string }
  | { name: 'challenges'; id?: string }
  | { name: 'dev-fixtures'; fixture: string; step: number }
  | { name: 'explain' }
  | { name: 'not-found'; hash: string };

/**
 * Parses `#/`, `#/lessons/<id>/step/<n>`, `#/lessons/<id>`, `#/lab`, `#/interview`, `#/interview/drill`, `#/retry`,
 * `#/interview/topics/<id>`, `#/tracks/<id>`, `#/challenges[/<id>]`, `#/dev/fixtures[/<name>[/step/<n>]]`, `#/explain`.
 */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '').replace(/^\/?/, '/');
  if (path === '/' || path === '') return { name: 'home' };
  const parts = path.split('/').filter(Boolean).map(safeDecode);
  if (parts[0] === 'lab' && parts.length === 1) return { name: 'lab' };
  const lab = /^\/lab\/?\?(.*)$/s.exec(path);
  if (lab) return { name: 'lab', query: labQuery(lab[1]) };
  if (parts[0] === 'interview' && parts.length === 1) return { name: 'interview' };
  if (parts[0] === 'retry' && parts.length === 1) return { name: 'retry' };
  if (parts[0] === 'interview' && parts[1] === 'drill' && parts.length === 2) return { name: 'interview-drill' };
  if (parts[0] === 'interview' && parts[1] === 'topics' && parts[2] && parts.length === 3) return { name: 'senior-topic', id: parts[2] };
  if (parts[0] === 'tracks' && parts[1] && parts.length === 2) return { name: 'track', id: parts[1] };
  if (parts[0] === 'challenges' && parts.length <= 2) return parts[1] ? { name: 'challenges', id: parts[1] } : { name: 'challenges' };
  if (parts[0] === 'explain' && parts.length === 1) return { name: 'explain' };
  if (parts[0] === 'lessons' && parts[1]) {
    if (parts.length === 2) return { name: 'lesson', id: parts[1], step: 0 };
    if (parts.length === 4 && parts[2] === 'step' && /^\d+$/.test(parts[3]))
      return { name: 'lesson', id: parts[1], step: Number(parts[3]) };
  }
  if (parts[0] === 'dev' && parts[1] === 'fixtures') {
    const fixture = parts[2] ?? 'deadlock';
    const step = parts[3] === 'step' && /^\d+$/.test(parts[4] ?? '') ? Number(parts[4]) : -1;
    return { name: 'dev-fixtures', fixture, step };
  }
  return { name: 'not-found', hash };
}

/** The hash for a route (inverse of parseRoute). */
export function formatRoute(route: Route): string {
  switch (route.name) {
    case 'home':
      return '#/';
    case 'lesson':
      return `#/lessons/${encodeURIComponent(route.id)}/step/${route.step}`;
    case 'lab': {
      const q = new URLSearchParams();
      for (const key of ['s', 'lesson', 'template'] as const) if (route.query?.[key] !== undefined) q.set(key, route.query[key]);
      const text = q.toString();
      return text ? `#/lab?${text}` : '#/lab';
    }
    case 'interview':
      return '#/interview';
    case 'retry':
      return '#/retry';
    case 'interview-drill':
      return '#/interview/drill';
    case 'senior-topic':
      return `#/interview/topics/${encodeURIComponent(route.id)}`;
    case 'track':
      return `#/tracks/${encodeURIComponent(route.id)}`;
    case 'challenges':
      return route.id ? `#/challenges/${encodeURIComponent(route.id)}` : '#/challenges';
    case 'dev-fixtures':
      return `#/dev/fixtures/${encodeURIComponent(route.fixture)}${route.step >= 0 ? `/step/${route.step}` : ''}`;
    case 'explain':
      return '#/explain';
    case 'not-found':
      return route.hash;
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The known parameters of a lab query string; others are ignored. */
function labQuery(text: string): LabQuery {
  const params = new URLSearchParams(text);
  const q: LabQuery = {};
  for (const key of ['s', 'lesson', 'template'] as const) {
    const v = params.get(key);
    if (v !== null) q[key] = v;
  }
  return q;
}
