import { describe, expect, it } from 'vitest';
import { createWorkerBackend, interviewData, lessonCatalog, lessonInfos, lessonPreview, lessonYaml } from './backend-worker';
import type { WorkerLike } from '../worker/client';
import type { PlayerFrame } from '../sim/player';
import { lessonToSpec, parseLesson } from '../scenario/lesson';
import { scriptItem, scriptSteps } from '../scenario/script';
import { EMPTY_SNAPSHOT } from './model/emptySnapshot';

describe('bundled course content', () => {
  it('loads the interview file against the bundled lessons', async () => {
    const interview = await lessonCatalog.interview!();
    expect(interview).toEqual(interviewData());
    expect(interview!.questions).toHaveLength(9);
    const ids = new Set(lessonInfos().map((l) => l.id));
    for (const q of interview!.questions) expect(ids.has(q.lesson)).toBe(true);
  });

  it('lists each lesson with its predict answers, and never the interview file as a lesson', () => {
    const infos = lessonInfos();
    expect(infos.find((l) => l.id === 'classic-deadlock')!.predictAnswers).toEqual({ a2: 'waits-for-b', b2: 'b-fails-after-timeout' });
    expect(infos.some((l) => l.id.includes('interview'))).toBe(false);
  });
});

/** A Worker that answers every request with `frame` (what the engine's Player would send). */
function fakeWorker(frame: () => PlayerFrame): WorkerLike {
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    terminate: () => undefined,
    postMessage: (m) => {
      const id = (m as { id: number }).id;
      queueMicrotask(() => w.onmessage?.({ data: { id, ok: true, state: frame(), history: [], timing: { handleMs: 0 } } } as MessageEvent));
    },
  };
  return w;
}

describe('a lesson’s preview', () => {
  it('is the script the engine plays, and the engine’s first answer reuses its objects', async () => {
    for (const { id } of lessonInfos()) {
      const spec = lessonToSpec(parseLesson(lessonYaml(id)!));
      // The Player builds its script with these functions from the YAML the page sends.
      const engineScript = scriptSteps(spec, spec.permutations[0]!).map(scriptItem);
      const preview = lessonPreview(id)!;
      expect(preview.script.map(({ index, kind, session, step, sql, label }) => ({ index, kind, session, step, sql, label }))).toEqual(
        engineScript,
      );
      const backend = createWorkerBackend({
        createWorker: () => fakeWorker(() => ({ snapshot: EMPTY_SNAPSHOT, script: engineScript, cursor: 0, offScript: false })),
      });
      const st = await backend.open({ kind: 'lesson', id });
      backend.dispose();
      expect(st.script).toBe(preview.script);
      expect(st.lesson).toBe(preview.meta);
    }
  });

  it('is not reused when the engine’s script differs: the engine’s own items are annotated', async () => {
    const preview = lessonPreview('classic-deadlock')!;
    const engineScript = preview.script
      .slice(1)
      .map(({ index, kind, session, step, sql, label }) => ({ index: index - 1, kind, session, step, sql, label }));
    const backend = createWorkerBackend({
      createWorker: () => fakeWorker(() => ({ snapshot: EMPTY_SNAPSHOT, script: engineScript, cursor: 0, offScript: false })),
    });
    const st = await backend.open({ kind: 'lesson', id: 'classic-deadlock' });
    backend.dispose();
    expect(st.script).not.toBe(preview.script);
    expect(st.script.map((s) => s.step)).toEqual(engineScript.map((s) => s.step));
  });
});
