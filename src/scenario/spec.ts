/**
 * Parser and writer for PostgreSQL isolationtester `.spec` files
 * (src/test/isolation/specscanner.l and specparse.y, PostgreSQL 14+ syntax).
 *
 * Scanner rules honoured here, in the order flex applies them:
 *  - keywords `conninfo notices permutation session setup step teardown` are lower case and only
 *    whole tokens (`setupx` is an identifier; `Setup` is an identifier);
 *  - identifiers are `[A-Za-z\x80-\xff_][A-Za-z\x80-\xff_0-9$]*` or `"double quoted"` with `""` for a
 *    quote; a quoted identifier may not span lines;
 *  - `#` starts a comment to end of line (outside SQL blocks and quoted identifiers);
 *  - an SQL block is everything from `{` to the FIRST `}`: no nesting, no string awareness, so
 *    `}` can never appear inside SQL. Spaces, tabs, CR and FF (not newlines) right after `{` and
 *    right before `}` are dropped; everything else is kept verbatim;
 *  - only `\n` counts as a line break for line numbers.
 */
import type { Permutation, PermutationStep, Spec, SpecSession, SpecStep, StepBlocker } from './types';

/** The app shows at most this many sessions side by side; the parser itself accepts more. */
export const MAX_SESSIONS = 8;

/** Spec texts longer than this (UTF-8 bytes) are rejected before scanning. */
export const MAX_SPEC_BYTES = 1024 * 1024;

/** A spec text that isolationtester would reject (or that is too large), with its position. */
export class SpecParseError extends Error {
  readonly line: number;
  readonly column: number;

  constructor(problem: string, line: number, column: number) {
    super(`line ${line}: ${problem}`);
    this.name = 'SpecParseError';
    this.line = line;
    this.column = column;
  }
}

const KEYWORDS = ['conninfo', 'notices', 'permutation', 'session', 'setup', 'step', 'teardown'] as const;
type Keyword = (typeof KEYWORDS)[number];
const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);

type Token =
  | { kind: 'keyword'; value: Keyword; line: number; column: number }
  | { kind: 'identifier'; value: string; quoted: boolean; line: number; column: number }
  | { kind: 'sql'; value: string; line: number; column: number }
  | { kind: 'integer'; value: string; line: number; column: number }
  | { kind: 'punct'; value: ',' | '(' | ')' | '*'; line: number; column: number }
  | { kind: 'eof'; line: number; column: number };

/** Horizontal whitespace as the scanner's `{space}` class: trimmed around SQL, skipped between tokens. */
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\f';
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
/** `\x80-\xff` in the C scanner is any byte of a UTF-8 multibyte character, i.e. any non-ASCII character. */
const isIdentStart = (c: string): boolean => (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c === '_' || c.charCodeAt(0) >= 0x80;
const isIdentCont = (c: string): boolean => isIdentStart(c) || isDigit(c) || c === '$';

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'eof':
      return 'end of file';
    case 'keyword':
      return `keyword "${token.value}"`;
    case 'identifier':
      return `name "${token.value}"`;
    case 'sql':
      return 'SQL block';
    case 'integer':
      return `number ${token.value}`;
    case 'punct':
      return `"${token.value}"`;
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  let lineStart = 0;
  const column = (at: number): number => at - lineStart + 1;
  const fail = (problem: string, atLine: number, atColumn: number): never => {
    throw new SpecParseError(problem, atLine, atColumn);
  };

  while (pos < text.length) {
    const c = text[pos];
    if (c === '\n') {
      pos++;
      line++;
      lineStart = pos;
      continue;
    }
    if (isSpace(c)) {
      pos++;
      continue;
    }
    if (c === '#') {
      while (pos < text.length && text[pos] !== '\n' && text[pos] !== '\r') pos++;
      continue;
    }
    const startLine = line;
    const startColumn = column(pos);
    if (isIdentStart(c)) {
      const from = pos;
      while (pos < text.length && isIdentCont(text[pos])) pos++;
      const word = text.slice(from, pos);
      if (KEYWORD_SET.has(word)) {
        tokens.push({ kind: 'keyword', value: word as Keyword, line: startLine, column: startColumn });
      } else {
        tokens.push({ kind: 'identifier', value: word, quoted: false, line: startLine, column: startColumn });
      }
      continue;
    }
    if (c === '"') {
      pos++;
      let value = '';
      for (;;) {
        if (pos >= text.length) fail('unterminated quoted identifier', startLine, startColumn);
        const d = text[pos];
        if (d === '\n') fail('unexpected newline in quoted identifier', line, column(pos));
        if (d === '"') {
          if (text[pos + 1] === '"') {
            value += '"';
            pos += 2;
            continue;
          }
          pos++;
          break;
        }
        value += d;
        pos++;
      }
      tokens.push({ kind: 'identifier', value, quoted: true, line: startLine, column: startColumn });
      continue;
    }
    if (c === '{') {
      pos++;
      while (pos < text.length && isSpace(text[pos])) pos++;
      const close = text.indexOf('}', pos);
      if (close < 0) fail('unterminated SQL block (no closing "}")', startLine, startColumn);
      let end = close;
      while (end > pos && isSpace(text[end - 1])) end--;
      const sql = text.slice(pos, end);
      for (let i = pos; i < close; i++) {
        if (text[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
      }
      pos = close + 1;
      tokens.push({ kind: 'sql', value: sql, line: startLine, column: startColumn });
      continue;
    }
    if (isDigit(c)) {
      const from = pos;
      while (pos < text.length && isDigit(text[pos])) pos++;
      tokens.push({ kind: 'integer', value: text.slice(from, pos), line: startLine, column: startColumn });
      continue;
    }
    if (c === ',' || c === '(' || c === ')' || c === '*') {
      pos++;
      tokens.push({ kind: 'punct', value: c, line: startLine, column: startColumn });
      continue;
    }
    const shown = c === '}' ? '"}" (SQL blocks end at the first "}")' : JSON.stringify(c);
    fail(`unexpected character ${shown}`, startLine, startColumn);
  }
  tokens.push({ kind: 'eof', line, column: column(pos) });
  return tokens;
}

/** Where each named thing was written, so semantic errors can point at it. */
interface Located<T> {
  value: T;
  line: number;
  column: number;
}

interface RawPermutationStep {
  name: Located<string>;
  blockers: { blocker: StepBlocker; at: Located<string> | null }[];
}

class Parser {
  private index = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    const token = this.tokens[this.index];
    if (token.kind !== 'eof') this.index++;
    return token;
  }

  private atKeyword(keyword: Keyword): boolean {
    const token = this.peek();
    return token.kind === 'keyword' && token.value === keyword;
  }

  private fail(token: Token, problem: string): never {
    throw new SpecParseError(problem, token.line, token.column);
  }

  private sqlBlock(after: string): string {
    const token = this.next();
    if (token.kind !== 'sql') this.fail(token, `expected "{" to open the SQL block after ${after}, found ${describe(token)}`);
    return token.value;
  }

  private name(what: string, after: string): Located<string> {
    const token = this.next();
    if (token.kind !== 'identifier') {
      const hint = token.kind === 'keyword' ? ` (keywords must be double-quoted to be used as names: "${token.value}")` : '';
      this.fail(token, `expected ${what} after ${after}, found ${describe(token)}${hint}`);
    }
    return { value: token.value, line: token.line, column: token.column };
  }

  private optionalConninfo(after: string): string | undefined {
    if (!this.atKeyword('conninfo')) return undefined;
    this.next();
    return this.name('a connection string', `"conninfo" ${after}`).value;
  }

  parse(): {
    spec: Spec;
    stepAt: Located<string>[];
    sessionAt: Located<string>[];
    permutations: RawPermutationStep[][];
  } {
    const spec: Spec = { setup: [], sessions: [], permutations: [] };
    const conninfo = this.optionalConninfo('at the top of the spec');
    if (conninfo !== undefined) spec.conninfo = conninfo;
    while (this.atKeyword('setup')) {
      this.next();
      spec.setup.push(this.sqlBlock('"setup"'));
    }
    if (this.atKeyword('teardown')) {
      this.next();
      spec.teardown = this.sqlBlock('"teardown"');
    }
    const stepAt: Located<string>[] = [];
    const sessionAt: Located<string>[] = [];
    while (this.atKeyword('session')) {
      this.next();
      const name = this.name('a session name', '"session"');
      sessionAt.push(name);
      const session: SpecSession = { name: name.value, steps: [] };
      const sessionConninfo = this.optionalConninfo(`in session "${name.value}"`);
      if (sessionConninfo !== undefined) session.conninfo = sessionConninfo;
      if (this.atKeyword('setup')) {
        this.next();
        session.setup = this.sqlBlock(`"setup" of session "${name.value}"`);
      }
      while (this.atKeyword('step')) {
        this.next();
        const stepName = this.name('a step name', '"step"');
        stepAt.push(stepName);
        session.steps.push({ name: stepName.value, sql: this.sqlBlock(`step "${stepName.value}"`) });
      }
      if (session.steps.length === 0) {
        const token = this.peek();
        const extra = this.atKeyword('setup') ? ' (a session has at most one setup block)' : '';
        this.fail(token, `session "${name.value}" has no steps: expected "step", found ${describe(token)}${extra}`);
      }
      if (this.atKeyword('teardown')) {
        this.next();
        session.teardown = this.sqlBlock(`"teardown" of session "${name.value}"`);
      }
      spec.sessions.push(session);
    }
    if (spec.sessions.length === 0) {
      const token = this.peek();
      const extra =
        token.kind === 'keyword' && (token.value === 'setup' || token.value === 'teardown')
          ? ' (global setup blocks come first, then at most one teardown, then sessions)'
          : '';
      this.fail(token, `expected "session", found ${describe(token)}${extra}`);
    }
    const permutations: RawPermutationStep[][] = [];
    while (this.atKeyword('permutation')) {
      this.next();
      const steps: RawPermutationStep[] = [];
      while (this.peek().kind === 'identifier') steps.push(this.permutationStep());
      if (steps.length === 0) this.fail(this.peek(), `expected a step name after "permutation", found ${describe(this.peek())}`);
      permutations.push(steps);
    }
    const token = this.peek();
    if (token.kind !== 'eof') {
      const where = permutations.length > 0 ? 'in permutation' : 'after the sessions';
      this.fail(token, `unexpected ${describe(token)} ${where}`);
    }
    return { spec, stepAt, sessionAt, permutations };
  }

  private permutationStep(): RawPermutationStep {
    const nameToken = this.next();
    if (nameToken.kind !== 'identifier') this.fail(nameToken, 'expected a step name');
    const name = { value: nameToken.value, line: nameToken.line, column: nameToken.column };
    const blockers: RawPermutationStep['blockers'] = [];
    const open = this.peek();
    if (open.kind === 'punct' && open.value === '(') {
      this.next();
      for (;;) {
        const token = this.next();
        if (token.kind === 'punct' && token.value === '*') {
          blockers.push({ blocker: { kind: 'star' }, at: null });
        } else if (token.kind === 'identifier') {
          const at = { value: token.value, line: token.line, column: token.column };
          if (this.atKeyword('notices')) {
            this.next();
            const count = this.next();
            if (count.kind !== 'integer') this.fail(count, `expected a number after "notices", found ${describe(count)}`);
            const notices = Number(count.value);
            if (!Number.isSafeInteger(notices) || notices > 0x7fffffff) this.fail(count, `notices count ${count.value} is too large`);
            blockers.push({ blocker: { kind: 'step', step: token.value, notices }, at });
          } else {
            blockers.push({ blocker: { kind: 'step', step: token.value }, at });
          }
        } else {
          this.fail(token, `expected a blocker ("*" or a step name) in the marker of step "${name.value}", found ${describe(token)}`);
        }
        const sep = this.next();
        if (sep.kind === 'punct' && sep.value === ')') break;
        if (!(sep.kind === 'punct' && sep.value === ',')) {
          this.fail(sep, `expected "," or ")" in the marker of step "${name.value}", found ${describe(sep)}`);
        }
      }
    }
    return { name, blockers };
  }
}

/** Parses and validates a spec text like isolationtester's check_testspec; throws SpecParseError. */
export function parseSpec(text: string): Spec {
  if (text.length > MAX_SPEC_BYTES || (text.length * 3 > MAX_SPEC_BYTES && utf8Length(text) > MAX_SPEC_BYTES)) {
    throw new SpecParseError(`spec is too large (${utf8Length(text)} bytes; the limit is ${MAX_SPEC_BYTES} bytes)`, 1, 1);
  }
  const { spec, stepAt, sessionAt, permutations } = new Parser(tokenize(text)).parse();

  // Stricter than isolationtester, which never compares session names: drivers address sessions by name.
  const seenSessions = new Set<string>();
  for (const at of sessionAt) {
    if (seenSessions.has(at.value)) throw new SpecParseError(`duplicate session name "${at.value}"`, at.line, at.column);
    seenSessions.add(at.value);
  }

  const sessionOfStep = new Map<string, number>();
  let k = 0;
  spec.sessions.forEach((session, sessionIndex) => {
    for (const step of session.steps) {
      const at = stepAt[k++];
      if (sessionOfStep.has(step.name)) throw new SpecParseError(`duplicate step name "${step.name}"`, at.line, at.column);
      sessionOfStep.set(step.name, sessionIndex);
    }
  });

  for (const raw of permutations) {
    for (const pstep of raw) {
      if (!sessionOfStep.has(pstep.name.value)) {
        throw new SpecParseError(`unknown step "${pstep.name.value}" in permutation`, pstep.name.line, pstep.name.column);
      }
    }
    // As isolationtester: a blocker must name a step of the same permutation, in another session.
    const inPermutation = new Set(raw.map((p) => p.name.value));
    for (const pstep of raw) {
      for (const { blocker, at } of pstep.blockers) {
        if (blocker.kind !== 'step' || at === null) continue;
        if (!inPermutation.has(blocker.step)) {
          const known = sessionOfStep.has(blocker.step) ? 'is not in this permutation' : 'is not a step of this spec';
          throw new SpecParseError(`blocker "${blocker.step}" of step "${pstep.name.value}" ${known}`, at.line, at.column);
        }
        if (sessionOfStep.get(blocker.step) === sessionOfStep.get(pstep.name.value)) {
          const session = spec.sessions[sessionOfStep.get(blocker.step)!].name;
          throw new SpecParseError(
            `step "${pstep.name.value}" cannot block on step "${blocker.step}" of its own session "${session}"`,
            at.line,
            at.column,
          );
        }
      }
    }
    spec.permutations.push({
      steps: raw.map((p): PermutationStep => ({ step: p.name.value, blockers: p.blockers.map((b) => b.blocker) })),
    });
  }
  return spec;
}

/** Why `sql` cannot be written as a spec SQL block unchanged, or undefined when it can. */
export function sqlBlockProblem(sql: string): string | undefined {
  if (sql.includes('}')) return 'contains "}", which always ends an SQL block';
  if (sql.length > 0 && (isSpace(sql[0]) || isSpace(sql[sql.length - 1]))) {
    return 'starts or ends with a space, tab, CR or form feed, which the scanner trims';
  }
  return undefined;
}

/** Why `name` cannot be written as a spec identifier, or undefined when it can. */
export function nameProblem(name: string): string | undefined {
  return name.includes('\n') ? 'contains a newline' : undefined;
}

/** A name as the spec writes it: bare when the scanner reads it back unchanged, else double-quoted. */
export function quoteName(name: string): string {
  const bare = name.length > 0 && isIdentStart(name[0]) && [...name].every(isIdentCont) && !KEYWORD_SET.has(name);
  return bare ? name : `"${name.replace(/"/g, '""')}"`;
}

function block(sql: string, what: string): string {
  const problem = sqlBlockProblem(sql);
  if (problem !== undefined) throw new Error(`cannot write ${what}: its SQL ${problem}`);
  if (sql === '') return '{ }';
  const open = sql.startsWith('\n') ? '{' : '{ ';
  const close = sql.endsWith('\n') ? '}' : ' }';
  return `${open}${sql}${close}`;
}

function name(value: string, what: string): string {
  const problem = nameProblem(value);
  if (problem !== undefined) throw new Error(`cannot write ${what} ${JSON.stringify(value)}: it ${problem}`);
  return quoteName(value);
}

/** How one permutation step is written in a spec: `s2a`, `s2a(*)`, `s2a(s1a, s3a notices 1)`. */
export function formatPermutationStep(step: PermutationStep): string {
  const stepName = name(step.step, 'permutation step');
  if (step.blockers.length === 0) return stepName;
  const markers = step.blockers.map((b) => {
    if (b.kind === 'star') return '*';
    const blocker = name(b.step, 'blocker');
    return b.notices === undefined ? blocker : `${blocker} notices ${b.notices}`;
  });
  return `${stepName}(${markers.join(', ')})`;
}

/** Writes a spec in canonical form; parseSpec(writeSpec(s)) deep-equals s. Throws on unwritable SQL or names. */
export function writeSpec(spec: Spec): string {
  const parts: string[] = [];
  if (spec.conninfo !== undefined) parts.push(`conninfo ${name(spec.conninfo, 'conninfo')}`);
  spec.setup.forEach((sql, i) => parts.push(`setup ${block(sql, `setup block ${i + 1}`)}`));
  if (spec.teardown !== undefined) parts.push(`teardown ${block(spec.teardown, 'teardown')}`);
  for (const session of spec.sessions) {
    const lines = [`session ${name(session.name, 'session')}`];
    if (session.conninfo !== undefined) lines.push(`conninfo ${name(session.conninfo, 'conninfo')}`);
    if (session.setup !== undefined) lines.push(`setup ${block(session.setup, `setup of session "${session.name}"`)}`);
    for (const step of session.steps) lines.push(`step ${name(step.name, 'step')} ${block(step.sql, `step "${step.name}"`)}`);
    if (session.teardown !== undefined) {
      lines.push(`teardown ${block(session.teardown, `teardown of session "${session.name}"`)}`);
    }
    parts.push(lines.join('\n'));
  }
  if (spec.permutations.length > 0) {
    parts.push(spec.permutations.map((p) => `permutation ${p.steps.map(formatPermutationStep).join(' ')}`).join('\n'));
  }
  return `${parts.join('\n\n')}\n`;
}

/** The session and step called `name`, or undefined. */
export function findStep(spec: Spec, name: string): { session: SpecSession; step: SpecStep } | undefined {
  for (const session of spec.sessions) {
    const step = session.steps.find((s) => s.name === name);
    if (step !== undefined) return { session, step };
  }
  return undefined;
}

/** Names of steps that no explicit permutation uses (isolationtester warns "unused step name"). */
export function unusedSteps(spec: Spec): string[] {
  if (spec.permutations.length === 0) return [];
  const used = new Set(spec.permutations.flatMap((p: Permutation) => p.steps.map((s) => s.step)));
  return spec.sessions.flatMap((s) => s.steps.map((step) => step.name)).filter((n) => !used.has(n));
}
