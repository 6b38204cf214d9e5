import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { staticCatalog, type InterviewData } from '../backend';
import { guidedBackend, guidedCode, guidedLesson, guidedScript } from '../fixtures/guided';
import { prefs } from '../state/prefs.svelte';
import { loadHighlighter } from '../state/highlighter.svelte';
import NarrationPanel from './NarrationPanel.svelte';
import CodePanel from './CodePanel.svelte';
import InterviewView from './InterviewView.svelte';
import LessonList from './LessonList.svelte';

const catalog = staticCatalog([
  {
    id: 'deadlock',
    title: { en: 'Transfer deadlock', ru: 'Взаимоблокировка переводов' },
    topic: 'deadlocks',
    steps: 10,
    predictAnswers: { a_upd2: 'waits-for-b' },
  },
]);

afterEach(() => {
  prefs.setLang('en');
  prefs.resetProgress();
  location.hash = '';
});

async function openAt(step: number) {
  location.hash = `#/lessons/deadlock/step/${step}`;
  render(App, { props: { catalog, createBackend: () => guidedBackend() } });
  await waitFor(() => expect(screen.getByTestId('step-position').textContent).toBe(`Step ${step} of 10`));
}
const position = () => screen.getByTestId('step-position').textContent;

describe('NarrationPanel', () => {
  it('shows the lesson summary before the first step, then what the last item did, in the current language', async () => {
    const { rerender } = render(NarrationPanel, { props: { script: guidedScript, cursor: 0, summary: guidedLesson.summary } });
    expect(screen.getByTestId('narration-text').textContent).toBe('Two transfers deadlock.');
    await rerender({ script: guidedScript, cursor: 2, summary: guidedLesson.summary });
    expect(screen.getByTestId('narration-text').textContent).toBe('A debits account 1 and locks row 1.');
    expect(screen.getByTestId('narration-step').textContent).toContain('Step 2');
    prefs.setLang('ru');
    await waitFor(() => expect(screen.getByTestId('narration-text').textContent).toBe('A списывает со счёта 1 и блокирует строку 1.'));
    await rerender({ script: guidedScript, cursor: 6, summary: guidedLesson.summary });
    expect(screen.getByTestId('narration-step').textContent).toBe('Шаг 6: Пауза: проходит 1,5 с виртуального времени');
    expect(screen.getByTestId('narration-text').textContent).toBe('Идёт время.');
  });

  it('renders narration as text, never as markup', () => {
    const script = [{ ...guidedScript[0], narration: { en: '<img src=x onerror=alert(1)>', ru: '' } }];
    render(NarrationPanel, { props: { script, cursor: 1 } });
    expect(screen.getByTestId('narration-text').textContent).toBe('<img src=x onerror=alert(1)>');
    expect(document.querySelector('img')).toBeNull();
  });

  it('appears in the player and in the session pane of the step that ran', async () => {
    await openAt(2);
    expect(screen.getByTestId('narration').textContent).toContain('A debits account 1 and locks row 1.');
    const paneA = screen.getAllByTestId('session-pane')[0];
    expect(paneA.querySelector('[data-testid=script-narration]')?.textContent).toBe('A debits account 1 and locks row 1.');
    // Lines that have not run carry no narration (it would give away predictions).
    const upcoming = document.querySelectorAll('[data-testid=session-pane] li.current, [data-testid=session-pane] li.todo');
    expect(upcoming.length).toBeGreaterThan(0);
    for (const li of upcoming) expect(li.getAttribute('title')).toBeNull();
  });
});

describe('predict checkpoint', () => {
  it('asks before the step, runs it after the answer, then shows right / wrong with the explanation', async () => {
    await openAt(4);
    await fireEvent.click(screen.getByTestId('step-next'));
    const form = await screen.findByTestId('predict');
    expect(position()).toBe('Step 4 of 10'); // the step did not run
    expect(form.textContent).toContain('A now credits account 2. What happens?');
    const check = screen.getByTestId('predict-check') as HTMLButtonElement;
    expect(check.disabled).toBe(true);
    const choices = screen.getAllByTestId('predict-choice') as HTMLInputElement[];
    expect(choices.map((c) => c.type)).toEqual(['radio', 'radio']);
    expect(document.activeElement).toBe(choices[0]); // keyboard lands on the choices
    // Pressing Next again keeps asking.
    await fireEvent.keyDown(window, { key: 'ArrowRight' });
    expect(position()).toBe('Step 4 of 10');
    await fireEvent.click(choices[0]); // "It completes at once": wrong
    expect(check.disabled).toBe(false);
    await fireEvent.click(check);
    await waitFor(() => expect(position()).toBe('Step 5 of 10'));
    const result = await screen.findByTestId('predict-result');
    expect(result.dataset.verdict).toBe('wrong');
    expect(result.textContent).toContain('You chose: It completes at once');
    expect(result.textContent).toContain('Right answer: It waits for session B');
    expect(result.textContent).toContain('Row 2 is locked by B until B ends.');
    expect(JSON.parse(localStorage.getItem('lockstep.answers')!)).toEqual({ deadlock: { a_upd2: 'completes' } });
    prefs.setLang('ru');
    await waitFor(() => expect(screen.getByTestId('predict-result').textContent).toContain('Строку 2 держит B до конца своей транзакции.'));
    expect(screen.getByTestId('predict-result').textContent).toContain('Не совсем.');
    // The result stays through the pause and goes once the next step runs.
    await fireEvent.click(screen.getByTestId('step-next'));
    await waitFor(() => expect(position()).toBe('Шаг 6 из 10'));
    expect(screen.getByTestId('predict-result')).toBeTruthy();
    await fireEvent.click(screen.getByTestId('step-next'));
    await waitFor(() => expect(screen.queryByTestId('predict-result')).toBeNull());
  });

  it('counts a right answer, and asks only once', async () => {
    await openAt(4);
    await fireEvent.click(screen.getByTestId('step-next'));
    await screen.findByTestId('predict');
    await fireEvent.click(screen.getAllByTestId('predict-choice')[1]);
    await fireEvent.submit(screen.getByTestId('predict'));
    await waitFor(() => expect(screen.getByTestId('predict-result').dataset.verdict).toBe('right'));
    expect(screen.getByTestId('predict-result').textContent).toContain('Right!');
    await fireEvent.click(screen.getByTestId('step-prev'));
    await waitFor(() => expect(position()).toBe('Step 4 of 10'));
    await fireEvent.click(screen.getByTestId('step-next'));
    await waitFor(() => expect(position()).toBe('Step 5 of 10'));
    expect(screen.queryByTestId('predict')).toBeNull();
  });

  it('can be skipped explicitly', async () => {
    await openAt(4);
    await fireEvent.click(screen.getByTestId('step-next'));
    await fireEvent.click(await screen.findByTestId('predict-skip'));
    await waitFor(() => expect(screen.getByTestId('predict-result').dataset.verdict).toBe('skipped'));
    expect(prefs.answerOf('deadlock', 'a_upd2')).toBeNull();
  });

  it('pauses play mode at the question', async () => {
    vi.useFakeTimers();
    try {
      await openAt(3);
      await fireEvent.click(screen.getByTestId('step-play'));
      await vi.advanceTimersByTimeAsync(1100);
      await vi.waitFor(() => expect(position()).toBe('Step 4 of 10'));
      await vi.advanceTimersByTimeAsync(1100);
      await vi.waitFor(() => expect(screen.getByTestId('predict')).toBeTruthy());
      await vi.advanceTimersByTimeAsync(5000);
      expect(position()).toBe('Step 4 of 10');
      expect(screen.getByTestId('step-play').textContent).toContain('Play');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('CodePanel', () => {
  it('keeps markup in the source as text (no script or img element is created)', async () => {
    await loadHighlighter('ts');
    const hostile = '// <script>window.__pwned = 1</script>\nconst a = "<img src=x onerror=alert(1)>"; // &amp; </code></pre>';
    render(CodePanel, { props: { snippets: [{ id: 'x', language: 'ts', title: 'Hostile', source: hostile }] } });
    const code = screen.getByTestId('highlighted-code');
    expect(code.textContent).toBe(hostile);
    expect(code.querySelector('script, img')).toBeNull();
    expect(code.querySelectorAll('span[class^=syn-]').length).toBeGreaterThan(0);
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
  });

  it('follows the step, lets the learner switch snippets, and copies the source', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const { rerender } = render(CodePanel, { props: { snippets: guidedCode, active: 'retry' } });
    expect(screen.getByTestId('code-panel').dataset.snippet).toBe('retry');
    await fireEvent.click(screen.getAllByTestId('code-tab')[0]);
    expect(screen.getByTestId('code-panel').dataset.snippet).toBe('transfer');
    await fireEvent.click(screen.getByTestId('code-copy'));
    expect(writeText).toHaveBeenCalledWith(guidedCode[0].source);
    await waitFor(() => expect(screen.getByTestId('code-copy').textContent).toContain('Copied'));
    await rerender({ snippets: guidedCode, active: undefined });
    expect(screen.getByTestId('code-panel').dataset.snippet).toBe('transfer');
  });

  it('shows the code of the step in the player', async () => {
    await openAt(2);
    expect(screen.getByTestId('code-panel').dataset.snippet).toBe('transfer');
    expect(screen.getByTestId('highlighted-code').textContent).toContain('func transfer');
  });
});

const interview: InterviewData = {
  title: { en: 'Interview', ru: 'Собеседование' },
  questions: [
    {
      id: 'what-is-deadlock',
      question: { en: 'When does PostgreSQL detect a deadlock?', ru: 'Когда PostgreSQL находит deadlock?' },
      choices: [
        { id: 'at-once', label: { en: 'At once', ru: 'Сразу' } },
        { id: 'after-timeout', label: { en: 'After deadlock_timeout', ru: 'Через deadlock_timeout' } },
      ],
      answer: 'after-timeout',
      model: { en: 'A waiter checks once, deadlock_timeout after it began to wait.', ru: 'Ждущий проверяет один раз.' },
      lesson: 'deadlock',
      see: [],
    },
    {
      id: 'free',
      question: { en: 'How do you avoid deadlocks?', ru: 'Как избежать deadlock?' },
      model: { en: 'Lock rows in one global order.', ru: 'Блокируйте строки в одном порядке.' },
      lesson: 'deadlock',
      see: [],
    },
  ],
  topics: [{ title: { en: 'Victim choice', ru: 'Выбор жертвы' }, lessons: ['deadlock'] }],
};
const lessons = [{ id: 'deadlock', title: { en: 'Transfer deadlock', ru: 'Взаимоблокировка' }, topic: 'deadlocks', steps: 10 }];

describe('InterviewView', () => {
  it('shows a clear empty state without questions', () => {
    render(InterviewView, { props: { interview: null, lessons } });
    expect(screen.getByTestId('interview-empty').textContent).toContain('not available yet');
  });

  it('runs the quiz: answer, model answer, proof link; saved, and can be answered again', async () => {
    render(InterviewView, { props: { interview, lessons } });
    const [q1, q2] = screen.getAllByTestId('interview-question');
    expect(q1.dataset.verdict).toBe('open');
    expect(q1.querySelector('[data-testid=interview-model]')).toBeNull();
    const check = q1.querySelector('[data-testid=interview-check]') as HTMLButtonElement;
    expect(check.disabled).toBe(true);
    await fireEvent.click(q1.querySelectorAll('[data-testid=interview-choice]')[0]);
    await fireEvent.click(check);
    await waitFor(() => expect(screen.getAllByTestId('interview-question')[0].dataset.verdict).toBe('wrong'));
    const answered = screen.getAllByTestId('interview-question')[0];
    expect(answered.querySelector('[data-testid=interview-model]')!.textContent).toContain('deadlock_timeout after it began');
    expect(answered.querySelector('[data-testid=interview-proof]')!.getAttribute('href')).toBe('#/lessons/deadlock/step/0');
    expect(answered.querySelector('[data-testid=interview-proof]')!.textContent).toBe('Transfer deadlock');
    await fireEvent.click(q2.querySelector('[data-testid=interview-reveal]')!);
    await waitFor(() => expect(screen.getAllByTestId('interview-question')[1].dataset.verdict).toBe('revealed'));
    expect(screen.getByTestId('interview-score').textContent).toBe('2 of 2 answered, 0 right');
    expect(JSON.parse(localStorage.getItem('lockstep.interview')!).answers).toEqual({ 'what-is-deadlock': 'at-once', free: null });
    await fireEvent.click(answered.querySelector('[data-testid=interview-again]')!);
    await waitFor(() => expect(screen.getAllByTestId('interview-question')[0].dataset.verdict).toBe('open'));
  });

  it('keeps the senior+ checklist', async () => {
    render(InterviewView, { props: { interview, lessons } });
    const topic = screen.getByTestId('interview-topic');
    await fireEvent.click(topic.querySelector('input[type=checkbox]')!);
    await waitFor(() => expect(screen.getByTestId('interview-topic').dataset.checked).toBe('true'));
    expect(prefs.interview.checked).toEqual(['Victim choice']);
    expect(topic.querySelector('a')!.getAttribute('href')).toBe('#/lessons/deadlock/step/0');
  });

  it('is reachable at #/interview from the app, in Russian too', async () => {
    prefs.setLang('ru');
    location.hash = '#/interview';
    render(App, { props: { catalog: { ...catalog, interview: async () => interview }, createBackend: null } });
    await waitFor(() => expect(screen.getAllByTestId('interview-question')).toHaveLength(2));
    expect(screen.getAllByTestId('interview-question')[0].textContent).toContain('Когда PostgreSQL находит deadlock?');
  });
});

describe('LessonList progress', () => {
  it('links to interview mode, shows predictions and resets progress after confirmation', async () => {
    prefs.markDone('deadlock');
    prefs.saveAnswer('deadlock', 'a_upd2', 'waits-for-b');
    render(LessonList, { props: { lessons: await catalog.list() } });
    expect(screen.getByTestId('interview-link').getAttribute('href')).toBe('#/interview');
    expect(screen.getByTestId('lesson-quiz').textContent).toBe('1 of 1 predicted right');
    await fireEvent.click(screen.getByTestId('reset-progress'));
    await fireEvent.click(screen.getByTestId('reset-progress-cancel'));
    expect(prefs.isDone('deadlock')).toBe(true);
    await fireEvent.click(screen.getByTestId('reset-progress'));
    await fireEvent.click(screen.getByTestId('reset-progress-confirm'));
    await waitFor(() => expect(screen.getByTestId('lesson-row').dataset.done).toBe('false'));
    expect(screen.queryByTestId('lesson-quiz')).toBeNull();
    expect(localStorage.getItem('lockstep.answers')).toBeNull();
    expect(localStorage.getItem('lockstep.done')).toBeNull();
  });
});
