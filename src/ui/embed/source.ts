/** What an embed route plays: a bundled lesson or a shared lab scenario, or why it cannot (pure). */
import type { Route } from '../model/route';
import type { PlayerSource } from '../lessonPlayer.svelte';
import type { Messages } from '../i18n/en';
import { decodeScenario, ShareError } from '../../scenario/share';
import { scenarioToSpecText } from '../../scenario/labScenario';

/** The player source of an embed, with the scenario's own title; or a problem worded at render time. */
export type EmbedSource = { ok: true; source: PlayerSource; title?: string } | { ok: false; problem: (t: Messages) => string };

/**
 * The source for `#/embed/lessons/<id>` (checked against the lesson ids once they are known) or
 * `#/embed/lab?s=<share code>` (decoded and turned into the spec the lab would play).
 */
export function embedSource(route: Extract<Route, { name: 'embed-lesson' | 'embed-lab' }>, lessonIds: string[] | null): EmbedSource {
  if (route.name === 'embed-lesson') {
    if (lessonIds && !lessonIds.includes(route.id)) return { ok: false, problem: (t) => t.offline.noLesson(route.id) };
    return { ok: true, source: { kind: 'lesson', id: route.id } };
  }
  if (!route.s) return { ok: false, problem: (t) => t.offline.noLink };
  try {
    const sc = decodeScenario(route.s);
    return { ok: true, source: { kind: 'spec', text: scenarioToSpecText(sc) }, title: sc.title.trim() || undefined };
  } catch (e) {
    const stage = e instanceof ShareError ? e.stage : 'json';
    const detail = e instanceof ShareError ? e.detail : e instanceof Error ? e.message : String(e);
    return { ok: false, problem: (t) => `${t.offline.badLink(t.labUi.linkStage[stage])} (${detail})` };
  }
}
