/** The bundled challenges (lessons/challenges/*.yaml), validated once by the challenge loader. */
import { loadChallenges, type Challenge } from '../../scenario/challenge';

const files = import.meta.glob('/lessons/challenges/*.yaml', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;

/** The challenges in list order, or the loader's message when a file does not validate. */
export function bundledChallenges(): { challenges: Challenge[]; error: string | null } {
  try {
    return { challenges: loadChallenges(files), error: null };
  } catch (e) {
    return { challenges: [], error: e instanceof Error ? e.message : String(e) };
  }
}
