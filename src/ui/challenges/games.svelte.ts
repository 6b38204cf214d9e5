/**
 * The two challenge games as runes classes, so the components only draw them.
 * Break: the learner's order so far is a permutation prefix, played in the lesson player (to show
 * the sessions, locks and data) and judged by the explorer on the same engine (goalReached).
 * Fix: the learner's SQL is explored over every interleaving and judged by judgeFix.
 */
import type { PlayerBackend } from '../backend';
import { LessonPlayer } from '../lessonPlayer.svelte';
import type { Explorer } from '../lab/explorer';
import type { InterleavingOutcome } from '../../scenario/explore';
import { countPermutations } from '../../scenario/permutations';
import {
  allSteps,
  challengeSpec,
  challengeSpecText,
  goalReached,
  judgeFix,
  type Challenge,
  type FixVerdict,
} from '../../scenario/challenge';

/** How many timers the break game fires in a row while no session can move (a deadlock needs one or two). */
const MAX_AUTO_TIMERS = 20;

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class BreakGame {
  picks = $state<string[]>([]);
  /** The explorer's outcome of the order so far (null before the first step or while running). */
  outcome = $state<InterleavingOutcome | null>(null);
  busy = $state(false);
  error = $state<string | null>(null);
  won = $state(false);
  readonly player: LessonPlayer;
  /** True once every step of every session is in the order. */
  get complete(): boolean {
    return this.picks.length === allSteps(this.challenge).length;
  }

  constructor(
    readonly challenge: Challenge,
    private readonly backend: PlayerBackend & { dispose?: () => void },
    private readonly explorer: Explorer | null,
    private readonly onwin: () => void,
  ) {
    this.player = new LessonPlayer(backend);
  }

  /** The next step of a session, or null when it has run them all. */
  nextStep(session: string): string | null {
    const s = this.challenge.sessions.find((x) => x.name === session);
    return s?.steps.find((st) => !this.picks.includes(st.name))?.name ?? null;
  }

  /** True while the session's last step has not finished (it waits on a lock or sleeps). */
  isBusy(session: string): boolean {
    return !!this.player.state?.snapshot.sessions.find((s) => s.name === session)?.pending;
  }

  /** A session can run its next step: it has one and is not busy. */
  canPick(session: string): boolean {
    return !this.busy && !this.won && this.nextStep(session) !== null && !this.isBusy(session);
  }

  /** True when sessions still have steps but every one of them waits and nothing will wake it. */
  get stuck(): boolean {
    const st = this.player.state;
    if (!st || this.busy) return false;
    const left = this.challenge.sessions.filter((s) => this.nextStep(s.name) !== null);
    return left.length > 0 && left.every((s) => this.isBusy(s.name)) && st.snapshot.timers.length === 0;
  }

  /** Opens the start state. */
  start(): Promise<void> {
    return this.sync();
  }

  async pick(session: string): Promise<void> {
    const step = this.nextStep(session);
    if (!step || !this.canPick(session)) return;
    this.picks = [...this.picks, step];
    await this.sync();
  }

  async undo(): Promise<void> {
    if (this.busy || this.picks.length === 0) return;
    this.picks = this.picks.slice(0, -1);
    this.won = false;
    await this.sync();
  }

  async restart(): Promise<void> {
    if (this.busy) return;
    this.picks = [];
    this.won = false;
    await this.sync();
  }

  /** Stops the player and ends the backend's engine Worker (each challenge page starts its own). */
  dispose(): void {
    this.player.dispose();
    this.backend.dispose?.();
  }

  /** Replays the order so far in the player, lets time pass while nobody can move, then judges it. */
  private async sync(): Promise<void> {
    const c = this.challenge;
    const picks = this.picks.slice();
    this.busy = true;
    this.error = null;
    this.outcome = null;
    try {
      const text = picks.length ? challengeSpecText(c, { order: picks }) : challengeSpecText(c);
      await this.player.open({ kind: 'spec', text }, picks.length);
      // isolationtester lets time pass when the next step's session is still busy: do the same
      // when no session can move, so a deadlock is detected or a timeout fires.
      for (let i = 0; i < MAX_AUTO_TIMERS; i++) {
        const st = this.player.state;
        const left = c.sessions.filter((s) => this.nextStep(s.name) !== null);
        const someoneFree = left.some((s) => !this.isBusy(s.name));
        const anyBusy = c.sessions.some((s) => this.isBusy(s.name));
        if (!st || someoneFree || !anyBusy || st.snapshot.timers.length === 0) break;
        await this.player.advanceToNextTimer();
      }
      if (this.player.failure) throw new Error(this.player.failure);
      if (picks.length === 0 || !this.explorer) return;
      const r = await this.explorer.explore(text, 1, () => undefined, c.invariant ? { invariant: c.invariant } : {});
      if (r.cancelled || picks.join(' ') !== this.picks.join(' ')) return;
      const o = r.outcomes[0] ?? null;
      this.outcome = o;
      if (o && goalReached(c, o, this.complete)) {
        this.won = true;
        this.onwin();
      }
    } catch (e) {
      this.error = messageOf(e);
    } finally {
      this.busy = false;
    }
  }
}

export class FixGame {
  sql = $state<Record<string, string>>({});
  checking = $state(false);
  done = $state(0);
  verdict = $state<FixVerdict | null>(null);
  /** The SQL the verdict is about (to say "changed since the last check"). */
  checkedSql = $state<string | null>(null);
  error = $state<string | null>(null);
  won = $state(false);
  readonly total: number;

  constructor(
    readonly challenge: Challenge,
    private readonly explorer: Explorer | null,
    private readonly onwin: () => void,
  ) {
    this.total = Number(countPermutations(challengeSpec(challenge)));
    this.sql = original(challenge);
  }

  /** The SQL as one string, to compare versions. */
  get key(): string {
    return JSON.stringify(this.sql);
  }

  setSql(step: string, sql: string): void {
    this.sql = { ...this.sql, [step]: sql };
  }

  load(sql: Record<string, string>): void {
    this.sql = { ...original(this.challenge), ...sql };
  }

  /** Explores every interleaving of the current SQL and judges it. */
  async check(): Promise<void> {
    if (!this.explorer || this.checking) return;
    const c = this.challenge;
    const key = this.key;
    const text = challengeSpecText(c, { sql: this.sql });
    this.checking = true;
    this.error = null;
    this.done = 0;
    this.verdict = null;
    try {
      const r = await this.explorer.explore(text, this.total, (d) => (this.done = d.length), c.invariant ? { invariant: c.invariant } : {});
      if (r.cancelled) return;
      this.verdict = judgeFix(c, r.outcomes, this.total);
      this.checkedSql = key;
      if (this.verdict.won) {
        this.won = true;
        this.onwin();
      }
    } catch (e) {
      this.error = messageOf(e);
    } finally {
      this.checking = false;
    }
  }
}

function original(c: Challenge): Record<string, string> {
  return Object.fromEntries(c.sessions.flatMap((s) => s.steps.map((st) => [st.name, st.sql])));
}
