/**
 * Challenge progress (solved, solution seen), kept in localStorage like the app's other
 * preferences; a missing, broken or foreign value reads as "nothing solved".
 */
const KEY = 'lockstep.challenges';

/** Per challenge id: solved, and whether the model solution was shown before solving. */
export interface ChallengeMark {
  won: boolean;
  revealed: boolean;
}

function storage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}

function isMarks(x: unknown): x is Record<string, ChallengeMark> {
  return (
    typeof x === 'object' &&
    x !== null &&
    !Array.isArray(x) &&
    Object.values(x).every((m) => typeof m === 'object' && m !== null && typeof m.won === 'boolean' && typeof m.revealed === 'boolean')
  );
}

function readMarks(): Record<string, ChallengeMark> {
  try {
    const v: unknown = JSON.parse(storage()?.getItem(KEY) ?? 'null');
    return isMarks(v) ? v : {};
  } catch {
    return {};
  }
}

export class ChallengeProgress {
  marks = $state<Record<string, ChallengeMark>>(readMarks());

  /** The mark of one challenge (unsolved, unseen when absent). */
  of(id: string): ChallengeMark {
    return this.marks[id] ?? { won: false, revealed: false };
  }

  /** Records a win. */
  markWon(id: string): void {
    this.update(id, { won: true });
  }

  /** Records that the model solution was shown. */
  markRevealed(id: string): void {
    this.update(id, { revealed: true });
  }

  private update(id: string, change: Partial<ChallengeMark>): void {
    this.marks = { ...this.marks, [id]: { ...this.of(id), ...change } };
    try {
      storage()?.setItem(KEY, JSON.stringify(this.marks));
    } catch {
      /* storage full or disabled: progress just does not persist */
    }
  }
}

/** The app's one progress store. */
export const challengeProgress = new ChallengeProgress();
