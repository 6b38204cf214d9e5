/**
 * Saved lab scenarios and the autosaved draft in localStorage. Entries are checked with the
 * share schema on every read (storage is as untrusted as a link); broken entries are skipped.
 */
import { checkScenario, SHARE_VERSION } from '../../scenario/share';
import type { LabScenario } from '../../scenario/labScenario';

export interface SavedScenario {
  id: string;
  name: string;
  scenario: LabScenario;
}

const KEYS = { saved: 'lockstep.lab.saved', draft: 'lockstep.lab.draft' } as const;

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
  const withVersion = typeof json === 'object' && json !== null && !Array.isArray(json) && !('v' in json) ? { v: SHARE_VERSION, ...json } : json;
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
