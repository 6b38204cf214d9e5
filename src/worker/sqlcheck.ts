/**
 * Syntax checks with PostgreSQL's own grammar (libpg-query), independent of the Worker API so
 * Node tests can call it. Only parsing: nothing is executed and no catalog is consulted, so a
 * statement that parses can still fail when it runs (an unknown table, say).
 */
import { loadModule, parseSync } from 'libpg-query';

/** Where and why a text does not parse: the parser's message and a 1-based line and column. */
export interface SyntaxProblem {
  message: string;
  line: number;
  column: number;
}

/** A request to the checker worker: texts to parse. */
export interface CheckRequest {
  id: number;
  texts: string[];
}

/** The answer: one entry per text, null when it parses. */
export interface CheckReply {
  id: number;
  problems: (SyntaxProblem | null)[];
}

/** Loads the parser's wasm once. */
export function loadChecker(): Promise<void> {
  return loadModule();
}

/** The parser's complaint about `text`, or null when PostgreSQL's grammar accepts it. */
export function syntaxProblem(text: string): SyntaxProblem | null {
  if (text.trim() === '') return null;
  try {
    parseSync(text);
    return null;
  } catch (e) {
    const err = e as Error & { sqlDetails?: { cursorPosition?: number } };
    // libpg-query reports the cursor as a 0-based character index into the text.
    const at = Math.min(err.sqlDetails?.cursorPosition ?? 0, text.length);
    const before = text.slice(0, at);
    const line = before.split('\n').length;
    const column = at - (before.lastIndexOf('\n') + 1) + 1;
    return { message: err.message, line, column };
  }
}
