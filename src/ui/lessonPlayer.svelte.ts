/**
 * The UI's lesson player (distinct from the engine-side Player it talks to through a PlayerBackend):
 * the current PlayerState from the backend, play/pause with speed, and
 * serialized calls (one backend request at a time, later requests queue behind it).
 */
import type { PlayerBackend, PlayerState, ScriptItem } from './backend';
import { share } from './model/share';

export type PlayerSource = { kind: 'lesson'; id: string } | { kind: 'spec'; text: string };

/** Playback speeds offered in the UI (steps per second = speed). */
export const SPEEDS = [0.5, 1, 2, 4] as const;

/** Reactive player state for one lesson, lab scenario or challenge, driven through a PlayerBackend. */
export class LessonPlayer {
  /**
   * Not deeply reactive: each answer replaces it whole, shared with the previous one (model/share),
   * so a panel whose part of the state did not change gets the same object and does not redraw.
   */
  state = $state.raw<PlayerState | null>(null);
  busy = $state(false);
  /** A failed backend call (rejected promise); engine messages come in state.error. */
  failure = $state<string | null>(null);
  playing = $state(false);
  speed = $state<number>(1);
  /** The next item, held back until its predict checkpoint is answered or skipped. */
  asking = $state.raw<ScriptItem | null>(null);

  readonly total = $derived(this.state?.script.length ?? 0);
  readonly cursor = $derived(this.state?.cursor ?? 0);
  readonly atEnd = $derived(this.state !== null && this.cursor >= this.total);
  readonly atStart = $derived(this.cursor <= 0);

  #backend: PlayerBackend;
  #queue: Promise<unknown> = Promise.resolve();
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Virtual time seen at each visited cursor, to map a timeline click back to a step. */
  // Read only by jumpToTime, never by a template or a derived value: no reactivity is wanted.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  #times = new Map<number, number>();
  /** Called after every state change (the app syncs the URL and progress from it). */
  onchange: ((s: PlayerState) => void) | null = null;
  /** Whether an item's predict checkpoint still needs an answer (the app asks the saved progress). */
  needsAnswer: (item: ScriptItem) => boolean = () => false;

  constructor(backend: PlayerBackend) {
    this.#backend = backend;
  }

  /** Runs one backend call after the previous ones and stores its state. */
  #run(call: (b: PlayerBackend) => Promise<PlayerState>): Promise<PlayerState | null> {
    const job = this.#queue.then(async () => {
      this.busy = true;
      try {
        const s = await call(this.#backend);
        this.state = share(this.state, s);
        this.failure = null;
        if (this.asking && this.asking.index !== s.cursor) this.asking = null;
        if (!s.midStep) this.#times.set(s.cursor, s.snapshot.clockMs);
        this.onchange?.(s);
        return s;
      } catch (err) {
        this.failure = err instanceof Error ? err.message : String(err);
        this.pause();
        return null;
      } finally {
        this.busy = false;
      }
    });
    this.#queue = job;
    return job;
  }

  /** Opens a lesson or spec, then jumps to `cursor` if given. */
  async open(source: PlayerSource, cursor = 0): Promise<void> {
    this.pause();
    this.asking = null;
    this.#times.clear();
    const s = await this.#run((b) => b.open(source));
    if (s && cursor > 0 && cursor !== s.cursor) await this.goto(Math.min(cursor, s.script.length));
  }

  /**
   * Runs the next item, unless its predict checkpoint must be answered first: then it asks
   * (`asking`) and pauses. Decided in the queue, so rapid presses cannot step past a question.
   */
  next = (): Promise<PlayerState | null> => {
    if (this.atEnd) return Promise.resolve(this.state);
    return this.#run(async (b) => {
      const s = this.state;
      if (s && s.cursor >= s.script.length) return s;
      const item = s?.script[s.cursor];
      if (s && item?.predict && this.needsAnswer(item)) {
        this.pause();
        this.asking = item;
        return s;
      }
      return b.next();
    });
  };
  /** The checkpoint was answered or skipped: close it and run the item it held back. */
  answered = (): Promise<PlayerState | null> => {
    this.asking = null;
    return this.#run((b) => b.next());
  };
  /**
   * Undoes one step. The target is read in the queue, not at the press: a second press before
   * the first one lands goes one more step back, and a press that reaches the start does nothing.
   */
  prev = (): Promise<PlayerState | null> => {
    if (this.atStart) return Promise.resolve(this.state);
    return this.#run(async (b) => {
      const s = this.state;
      if (s && s.cursor <= 0) return s;
      return b.goto(Math.max(0, (s?.cursor ?? 0) - 1));
    });
  };
  goto = (cursor: number) => this.#run((b) => b.goto(cursor));
  reset = () => {
    this.pause();
    return this.#run((b) => b.reset());
  };
  runAdHoc = (session: string, sql: string) => this.#run((b) => b.runAdHoc(session, sql));
  advance = (ms: number) => this.#run((b) => b.advance(ms));
  advanceToNextTimer = () => this.#run((b) => b.advanceToNextTimer());

  /**
   * Timeline jump: shows the moment `atMs` (events carry time, not cursors). That is the first
   * visited step whose clock reached it; when the step's time ran on past `atMs` (a pause, a
   * timer), the step is replayed with its clock stopped at `atMs`. False when no visited step matches.
   */
  jumpToTime(atMs: number): boolean {
    const hits = [...this.#times].filter(([, t]) => t >= atMs).map(([c]) => c);
    if (!hits.length) return false;
    this.pause();
    const cursor = Math.min(...hits);
    const inside = cursor > 0 && this.#times.get(cursor)! > atMs && (this.#times.get(cursor - 1) ?? 0) < atMs;
    void this.#run((b) => (inside ? b.goto(cursor, atMs) : b.goto(cursor)));
    return true;
  }

  /** Starts automatic stepping at the current speed until the end of the script. */
  play(): void {
    if (this.playing || this.atEnd) return;
    this.playing = true;
    this.#schedule();
  }

  pause(): void {
    this.playing = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  togglePlay(): void {
    if (this.playing) this.pause();
    else this.play();
  }

  setSpeed(speed: number): void {
    this.speed = speed;
  }

  #schedule(): void {
    this.#timer = setTimeout(async () => {
      if (!this.playing) return;
      await this.next();
      if (this.atEnd || this.failure || this.asking) this.pause();
      else if (this.playing) this.#schedule();
    }, 1000 / this.speed);
  }

  /** Stops timers (component teardown). */
  dispose(): void {
    this.pause();
    this.onchange = null;
  }
}
