/**
 * The course as a path: the lesson list in course order with levels and translated tags, a track
 * with its progress after really finishing a lesson, a senior topic page, and the follow-up drill.
 * Expectations are read from lessons/course/course.yaml, the lessons and the interview file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCourse, courseOrder } from '../../../src/scenario/course';
import { parseInterview } from '../../../src/scenario/lesson';
import { assert, norm, waitFor, type FlowContext } from '../harness';
import type { Flow } from '../flow';
import { LESSONS, lessonIds, lessonYaml } from '../lessonData';

const course = () => parseCourse(readFileSync(join(LESSONS, 'course', 'course.yaml'), 'utf8'), lessonIds());
const interview = () => parseInterview(readFileSync(join(LESSONS, 'interview', 'interview.yaml'), 'utf8'), lessonIds());
/** A lesson's level as the app shows it (`advanced` is read as `senior`). */
const levelOf = (id: string) => {
  const level = (lessonYaml(id) as unknown as { level: string }).level;
  return level === 'advanced' ? 'senior' : level;
};

/** Waits for the full list and returns its rows in page order. */
async function rows(ctx: FlowContext) {
  const ids = lessonIds();
  await waitFor(async () => (await ctx.byTestId('lesson-row').count()) === ids.length, `expected ${ids.length} lesson rows`);
  return ctx.byTestId('lesson-row').evaluateAll((els) =>
    els.map((r) => ({
      id: r.getAttribute('data-lesson') ?? '',
      number: r.getAttribute('data-number') ?? '',
      level: r.getAttribute('data-level') ?? '',
      levelText: r.querySelector('[data-testid="lesson-level"]')?.textContent?.trim() ?? '',
      tags: r.querySelector('[data-testid="lesson-tags"]')?.textContent?.trim() ?? '',
    })),
  );
}

const courseList: Flow = {
  name: 'course-list',
  title: 'lesson list follows lessons/course/course.yaml: parts, numbers, levels, "start here", tracks; light and dark',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/'));
    const c = course();
    const order = courseOrder(c);
    const shown = await rows(ctx);
    assert(
      shown.map((r) => r.id).join(' ') === order.join(' '),
      `list order is\n  ${shown.map((r) => r.id).join(' ')}\nexpected the course order\n  ${order.join(' ')}`,
    );
    shown.forEach((r, i) => {
      assert(r.number === String(i + 1), `${r.id}: number ${r.number}, expected ${i + 1}`);
      assert(r.level === levelOf(r.id), `${r.id}: level ${r.level}, the lesson file says ${levelOf(r.id)}`);
      assert(r.levelText === r.level, `${r.id}: level badge reads "${r.levelText}"`);
    });
    const parts = await ctx.byTestId('course-part').evaluateAll((els) => els.map((e) => e.querySelector('h3')?.textContent?.trim() ?? ''));
    assert(parts.join('|') === c.parts.map((p) => p.title.en).join('|'), `part headings: ${parts.join(' | ')}`);
    const start = ctx.byTestId('start-here');
    assert(await start.isVisible(), 'no "start here" entry on a first visit');
    assert(
      (await start.locator('a').getAttribute('href')) === `#/lessons/${c.start}/step/0`,
      '"start here" does not open the start lesson',
    );
    const cards = await ctx
      .byTestId('track-card')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-track'), e.getAttribute('data-done'), e.getAttribute('data-total')]));
    assert(cards.length === c.tracks.length, `expected ${c.tracks.length} track cards, got ${cards.length}`);
    for (const t of c.tracks) {
      const card = cards.find((x) => x[0] === t.id);
      assert(card && card[1] === '0' && card[2] === String(t.lessons.length), `track ${t.id}: card ${JSON.stringify(card)}`);
    }
    await ctx.shot();
    await ctx.byTestId('theme-toggle').click();
    await waitFor(async () => (await ctx.page.locator('html').getAttribute('data-theme')) === 'dark', 'dark theme not applied');
    await ctx.shot('dark');
  },
};

const courseListRu: Flow = {
  name: 'course-list-ru',
  title: 'lesson list in Russian: translated levels, part titles and topic tags',
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/'));
    await rows(ctx);
    await ctx.setLook({ lang: 'ru' });
    const c = course();
    const shown = await rows(ctx);
    const levels: Record<string, string> = { beginner: 'начальный', intermediate: 'средний', senior: 'senior' };
    for (const r of shown) {
      const topics = (lessonYaml(r.id) as unknown as { topics: string[] }).topics;
      const expected = topics.map((t) => c.tags[t]?.ru ?? t).join(', ');
      assert(norm(r.tags) === norm(expected), `${r.id}: tags "${r.tags}", expected "${expected}"`);
      assert(r.levelText === levels[r.level], `${r.id}: level badge "${r.levelText}" in Russian`);
    }
    const deadlockRow = shown.find((r) => r.id === 'classic-deadlock');
    assert(deadlockRow?.tags.includes('взаимоблокировка'), `classic-deadlock tags are not translated: "${deadlockRow?.tags}"`);
    const parts = await ctx.byTestId('course-part').evaluateAll((els) => els.map((e) => e.querySelector('h3')?.textContent?.trim() ?? ''));
    assert(parts.join('|') === c.parts.map((p) => p.title.ru).join('|'), `Russian part headings: ${parts.join(' | ')}`);
    const body = await ctx.page.locator('[data-testid="lesson-list"]').innerText();
    for (const en of ['Tracks', 'Level', 'New here?', 'beginner', 'intermediate'])
      assert(!body.includes(en), `English text "${en}" in the Russian lesson list`);
    await ctx.shot();
  },
};

const courseList390: Flow = {
  name: 'course-list-390',
  title: 'lesson list at 390 px: every row and track card present, Russian, dark',
  viewport: { width: 390, height: 844 },
  async run(ctx) {
    await ctx.page.goto(ctx.url('#/'));
    await rows(ctx);
    await ctx.setLook({ lang: 'ru' });
    await ctx.byTestId('theme-toggle').click();
    assert((await ctx.byTestId('track-card').count()) === course().tracks.length, 'track cards missing at 390 px');
    assert(await ctx.byTestId('start-here').isVisible(), '"start here" hidden at 390 px');
    await ctx.shot();
  },
};

const courseTrack: Flow = {
  name: 'course-track',
  title: 'classroom track: finishing a lesson in the player shows as progress on the card and the track page',
  async run(ctx) {
    const c = course();
    const track = c.tracks.find((t) => t.id === 'classroom');
    assert(track, 'no classroom track in lessons/course/course.yaml');
    const finished = 'nowait';
    assert(track.lessons.includes(finished), `the classroom track has no ${finished}`);
    await ctx.page.goto(ctx.url(`#/tracks/${track.id}`));
    const progress = ctx.byTestId('track-progress');
    await waitFor(async () => (await progress.getAttribute('data-done')) === '0', 'track page shows no progress 0');
    const listed = await ctx.byTestId('track-lesson').evaluateAll((els) => els.map((e) => e.getAttribute('data-lesson')));
    assert(listed.join(' ') === track.lessons.join(' '), `track lessons ${listed.join(' ')}, expected ${track.lessons.join(' ')}`);
    // Finish one lesson for real, through the player.
    ctx.predictPolicy = 'skip';
    await ctx.openLesson(finished);
    const [, total] = await ctx.position();
    for (let i = 0; i < total; i++) await ctx.next();
    // The goal came before step 1; the conclusion comes at the end.
    const conclusion = (lessonYaml(finished) as unknown as { conclusion: { en: string } }).conclusion.en;
    const shownConclusion = norm((await ctx.byTestId('narration-conclusion').textContent()) ?? '');
    assert(
      shownConclusion.endsWith(norm(conclusion)),
      `the end of ${finished} shows "${shownConclusion.slice(0, 80)}…", not its conclusion`,
    );
    await ctx.shot('conclusion');
    await ctx.page.goto(ctx.url('#/'));
    const card = ctx.page.locator(`[data-testid="track-card"][data-track="${track.id}"]`);
    await waitFor(async () => (await card.getAttribute('data-done')) === '1', 'the classroom card does not count the finished lesson');
    assert((await ctx.byTestId('start-here').count()) === 0, '"start here" still shown after a finished lesson');
    await card.locator('a').first().click();
    await waitFor(async () => (await progress.getAttribute('data-done')) === '1', 'the track page does not count the finished lesson');
    assert(
      norm((await progress.textContent()) ?? '').startsWith(`1 of ${track.lessons.length} done`),
      `progress text "${await progress.textContent()}"`,
    );
    const row = ctx.page.locator(`[data-testid="track-lesson"][data-lesson="${finished}"]`);
    assert((await row.getAttribute('data-done')) === 'true', `${finished} is not marked done on the track page`);
    const next = await ctx.byTestId('track-next').locator('a').getAttribute('href');
    const firstOpen = track.lessons.find((l) => l !== finished);
    assert(next === `#/lessons/${firstOpen}/step/0`, `"continue" links to ${next}, expected ${firstOpen}`);
    await ctx.shot();
  },
};

const seniorTopic: Flow = {
  name: 'senior-topic',
  title: 'interview mode links every senior topic page; a page shows its text and lessons, in English and Russian',
  async run(ctx) {
    const iv = interview();
    await ctx.page.goto(ctx.url('#/interview'));
    const links = ctx.byTestId('senior-topic-link');
    await waitFor(async () => (await links.count()) === iv.pages.length, `expected ${iv.pages.length} senior topic links`);
    const page = iv.pages.find((p) => p.id === 'transaction-timeout');
    assert(page, 'no transaction-timeout page in the interview file');
    await ctx.page.locator(`[data-testid="senior-topic-link"][data-topic="${page.id}"]`).click();
    const article = ctx.byTestId('senior-topic');
    await waitFor(
      async () =>
        norm(
          (await article
            .locator('h2')
            .textContent()
            .catch(() => '')) ?? '',
        ) === norm(page.title.en),
      'topic page title',
    );
    const paras = page.body.en.split(/\n\s*\n/).length;
    assert((await article.locator('.para').count()) === paras, `expected ${paras} paragraphs`);
    const hrefs = await article.locator('.lessons a').evaluateAll((els) => els.map((e) => e.getAttribute('href')));
    assert(hrefs.join(' ') === page.lessons.map((l) => `#/lessons/${l}/step/0`).join(' '), `lesson links ${hrefs.join(' ')}`);
    await ctx.shot();
    await ctx.setLook({ lang: 'ru' });
    await waitFor(async () => norm((await article.locator('h2').textContent()) ?? '') === norm(page.title.ru), 'Russian topic page title');
    assert(norm((await article.locator('.para').first().textContent()) ?? '').startsWith(norm(page.body.ru).slice(0, 40)), 'Russian body');
    await ctx.shot('ru');
  },
};

const interviewDrill: Flow = {
  name: 'interview-drill',
  title: 'follow-ups appear after answering; the drill mixes them across questions and reveals model answers',
  async run(ctx) {
    const iv = interview();
    const q = iv.questions[0];
    await ctx.page.goto(ctx.url('#/interview'));
    const item = ctx.page.locator(`[data-testid="interview-question"][data-question="${q.id}"]`);
    await waitFor(() => item.isVisible(), 'first question not shown');
    assert((await item.getByTestId('interview-followup').count()) === 0, 'follow-ups visible before answering');
    await item.getByTestId('interview-reveal').click();
    await waitFor(
      async () => (await item.getByTestId('interview-followup').count()) === q.followups.length,
      'follow-ups not shown after the answer',
    );
    await item.getByTestId('followup-reveal').first().click();
    const fm = norm((await item.getByTestId('followup-model').first().textContent()) ?? '');
    assert(fm === norm(q.followups[0].model.en), `follow-up answer "${fm.slice(0, 60)}…"`);
    await ctx.byTestId('drill-link').click();
    const card = ctx.byTestId('drill-card');
    await waitFor(() => card.isVisible(), 'drill card not shown');
    const total = iv.questions.reduce((n, x) => n + x.followups.length, 0);
    const seen: { id: string; parent: string }[] = [];
    for (let i = 0; i < 3; i++) {
      seen.push({ id: (await card.getAttribute('data-followup')) ?? '', parent: (await card.getAttribute('data-parent')) ?? '' });
      await ctx.byTestId('drill-reveal').click();
      const model = norm((await ctx.byTestId('drill-model').textContent()) ?? '');
      const f = iv.questions.flatMap((x) => x.followups).find((x) => x.id === seen[i].id);
      assert(f && model === norm(f.model.en), `drill card ${seen[i].id}: model answer does not match the interview file`);
      if (i === 1) await ctx.shot();
      await ctx.byTestId('drill-next').click();
      await waitFor(async () => (await card.getAttribute('data-followup')) !== seen[i].id, 'drill did not move on');
    }
    assert(
      new Set(seen.map((s) => s.parent)).size === seen.length,
      `three drill cards in a row follow up on the same question: ${JSON.stringify(seen)}`,
    );
    assert(
      seen[0].id === iv.questions[0].followups[0].id && seen[1].id === iv.questions[1].followups[0].id,
      `drill order ${JSON.stringify(seen)}`,
    );
    assert(norm((await ctx.byTestId('drill-done').textContent()) ?? '') === '3 revealed', 'drill count of revealed answers');
    assert(norm((await card.locator('.number').textContent()) ?? '').startsWith(`Question 4 of ${total}`), 'drill position');
  },
};

export const FLOWS: Flow[] = [courseList, courseListRu, courseList390, courseTrack, seniorTopic, interviewDrill];
