/** Hash routes of the app, parsed and printed (pure). */

/** What `#/lab?…` asks the lab to open: a share code (`s`), a lesson id or a template id. */
export interface LabQuery {
  s?: string;
  lesson?: string;
  template?: string;
}

/** How an embed asks to look (`?lang=ru&theme=dark`), for this page only; unknown values are ignored. */
export interface EmbedLook {
  lang?: string;
  theme?: string;
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
  | { name: 'locks' }
  | { name: 'dev-fixtures'; fixture: string; step: number }
  | { name: 'embed-lesson'; id: string; step: number; look: EmbedLook }
  | { name: 'embed-lab'; s?: string; look: EmbedLook }
  | { name: 'explain' }
  | { name: 'not-found'; hash: string };

/**
 * Parses `#/`, `#/lessons/<id>/step/<n>`, `#/lessons/<id>`, `#/lab`, `#/interview`, `#/interview/drill`, `#/retry`,
 * `#/interview/topics/<id>`, `#/tracks/<id>`, `#/challenges[/<id>]`, `#/locks`, `#/explain`, `#/dev/fixtures[/<name>[/step/<n>]]`,
 * `#/embed/lessons/<id>[/step/<n>]` and `#/embed/lab?s=<share code>` (both with optional `lang` and `theme`).
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
  if (parts[0] === 'locks' && parts.length === 1) return { name: 'locks' };
  if (parts[0] === 'challenges' && parts.length <= 2) return parts[1] ? { name: 'challenges', id: parts[1] } : { name: 'challenges' };
  if (parts[0] === 'explain' && parts.length === 1) return { name: 'explain' };
  if (parts[0] === 'lessons' && parts[1]) {
    if (parts.length === 2) return { name: 'lesson', id: parts[1], step: 0 };
    if (parts.length === 4 && parts[2] === 'step' && /^\d+$/.test(parts[3]))
      return { name: 'lesson', id: parts[1], step: Number(parts[3]) };
  }
  if (parts[0] === 'embed') {
    const embed = embedRoute(path);
    if (embed) return embed;
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
    case 'locks':
      return '#/locks';
    case 'dev-fixtures':
      return `#/dev/fixtures/${encodeURIComponent(route.fixture)}${route.step >= 0 ? `/step/${route.step}` : ''}`;
    case 'embed-lesson':
      return `#/embed/lessons/${encodeURIComponent(route.id)}${route.step > 0 ? `/step/${route.step}` : ''}${lookQuery(route.look)}`;
    case 'embed-lab': {
      const q = new URLSearchParams();
      if (route.s !== undefined) q.set('s', route.s);
      if (route.look.lang) q.set('lang', route.look.lang);
      if (route.look.theme) q.set('theme', route.look.theme);
      const text = q.toString();
      return text ? `#/embed/lab?${text}` : '#/embed/lab';
    }
    case 'explain':
      return '#/explain';
    case 'not-found':
      return route.hash;
  }
}

/** `#/embed/lessons/<id>[/step/<n>][?lang=…&theme=…]` and `#/embed/lab[?s=…&lang=…&theme=…]`; null: not an embed path. */
function embedRoute(path: string): Route | null {
  const m = /^\/embed\/([^?]*?)\/?(?:\?(.*))?$/s.exec(path);
  if (!m) return null;
  const params = new URLSearchParams(m[2] ?? '');
  const look: EmbedLook = {};
  const lang = params.get('lang');
  const theme = params.get('theme');
  if (lang !== null) look.lang = lang;
  if (theme !== null) look.theme = theme;
  const parts = m[1].split('/').filter(Boolean).map(safeDecode);
  if (parts[0] === 'lab' && parts.length === 1) {
    const s = params.get('s');
    return s !== null ? { name: 'embed-lab', s, look } : { name: 'embed-lab', look };
  }
  if (parts[0] === 'lessons' && parts[1]) {
    if (parts.length === 2) return { name: 'embed-lesson', id: parts[1], step: 0, look };
    if (parts.length === 4 && parts[2] === 'step' && /^\d+$/.test(parts[3]))
      return { name: 'embed-lesson', id: parts[1], step: Number(parts[3]), look };
  }
  return null;
}

function lookQuery(look: EmbedLook): string {
  const q = new URLSearchParams();
  if (look.lang) q.set('lang', look.lang);
  if (look.theme) q.set('theme', look.theme);
  const text = q.toString();
  return text ? `?${text}` : '';
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
