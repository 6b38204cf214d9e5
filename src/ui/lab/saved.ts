/**
 * Saved lab scenarios, the autosaved draft and the recent drafts (what opening something else
 * replaced) in localStorage. Entries are checked with the share schema on every read (storage
 * is as untrusted as a link); broken entries are skipped.
 */
import { checkScenario, SHARE_VERSION } from '../../scenario/share';
import type { LabScenario } from '../../scenario/labScenario';

export interface SavedScenario {
  id: string;
  name: string;
  scenario: LabScenario;
}

const KEYS = { saved: 'lockstep.lab.saved', draft: 'lockstep.lab.draft', recent: 'lockstep.lab.recent' } as const;

/** How many replaced drafts are kept. */
export const MAX_RECENT = 10;

/** A draft that opening something else replaced; `at` is when (ms since the epoch). */
export interface RecentDraft {
  id: string;
  at: number;
  scenario: LabScenario;
}

function read(key: string): unknown {
  try {
    const text = globalThis.localStorage?.getItem(key);
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function write(key: string, value: unknown): boolean {
  try {
    globalThis.localStorage?.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

/** Parses untrusted scenario JSON (share format, `v` optional); throws ShareError 'schema'. */
export function scenarioFromJson(json: unknown): LabScenario {
  const withVersion =
    typeof json === 'object' && json !== null && !Array.isArray(json) && !('v' in json) ? { v: SHARE_VERSION, ...json } : json;
  return checkScenario(withVersion);
}

/** The scenario as the JSON file the lab exports. */
export function scenarioJson(sc: LabScenario): string {
  return JSON.stringify({ v: SHARE_VERSION, ...sc }, null, 2) + '\n';
}

/** Every valid saved scenario, in saved order. */
export function listSaved(): SavedScenario[] {
  const raw = read(KEYS.saved);
  if (!Array.isArray(raw)) return [];
  const out: SavedScenario[] = [];
  for (const e of raw) {
    if (typeof e !== 'object' || e === null) continue;
    const { id, name, scenario } = e as Record<string, unknown>;
    if (typeof id !== 'string' || typeof name !== 'string') continue;
    try {
      out.push({ id, name, scenario: scenarioFromJson(scenario) });
    } catch {
      /* a damaged entry is skipped */
    }
  }
  return out;
}

/** Replaces the saved list; false when storage is full or disabled. */
export function storeSaved(list: SavedScenario[]): boolean {
  return write(
    KEYS.saved,
    list.map((s) => ({ id: s.id, name: s.name, scenario: { v: SHARE_VERSION, ...s.scenario } })),
  );
}

/** The autosaved draft, if any. */
export function loadDraft(): LabScenario | null {
  const raw = read(KEYS.draft);
  if (raw === null) return null;
  try {
    return scenarioFromJson(raw);
  } catch {
    return null;
  }
}

/** Autosaves the draft. */
export function storeDraft(sc: LabScenario): void {
  write(KEYS.draft, { v: SHARE_VERSION, ...sc });
}

/** The recent drafts, newest first. */
export function listRecent(): RecentDraft[] {
  const raw = read(KEYS.recent);
  if (!Array.isArray(raw)) return [];
  const out: RecentDraft[] = [];
  for (const e of raw) {
    if (typeof e !== 'object' || e === null) continue;
    const { id, at, scenario } = e as Record<string, unknown>;
    if (typeof id !== 'string' || typeof at !== 'number') continue;
    try {
      out.push({ id, at, scenario: scenarioFromJson(scenario) });
    } catch {
      /* a damaged entry is skipped */
    }
  }
  return out;
}

/** JSON with object keys sorted, so content compares equal whatever order the keys were built in. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/** True when two scenarios have the same content. */
export function sameScenario(a: LabScenario, b: LabScenario): boolean {
  return canonical(a) === canonical(b);
}

/**
 * Keeps `sc` at the front of the recent drafts (an equal entry moves up rather than doubling;
 * the oldest beyond MAX_RECENT drop off). Returns the new list, or null when storage refused it.
 */
export function keepRecent(sc: LabScenario, at: number): RecentDraft[] | null {
  const rest = listRecent().filter((r) => !sameScenario(r.scenario, sc));
  const list = [{ id: `${at.toString(36)}-${rest.length}`, at, scenario: sc }, ...rest].slice(0, MAX_RECENT);
  const ok = write(
    KEYS.recent,
    list.map((r) => ({ id: r.id, at: r.at, scenario: { v: SHARE_VERSION, ...r.scenario } })),
  );
  return ok ? list : null;
}
