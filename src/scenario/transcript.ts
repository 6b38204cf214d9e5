/**
 * Transcripts of played permutations: the isolationtester's own text (formatText) and a Markdown
 * rendering for a blog post or an exam: setup, a table of steps per session in play order with
 * their outcome, result sets as Markdown tables, and errors with SQLSTATE.
 */
import { formatText, type PermutationRun } from './isolation';
import type { Spec, StatementResult } from './types';

/** isolationtester's expected-output text for the runs. */
export function transcriptText(spec: Spec, runs: PermutationRun[]): string {
  return formatText(spec, runs);
}

/** Text inside a Markdown table cell: no pipes or newlines break the row. */
function cell(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ').replace(/</g, '&lt;');
}

/** SQL as written in a spec block, without its blank edge lines and common indentation. */
function dedent(text: string): string {
  const lines = text
    .replace(/^\s*\n/, '')
    .replace(/\s+$/, '')
    .split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length));
  return lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n');
}

/** A fenced code block whose fence is longer than any backtick run inside. */
function fenced(text: string, lang = 'sql'): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text.replace(/\s+$/, '')}\n${fence}\n`;
}

function resultTable(r: StatementResult): string {
  const columns = r.columns ?? [];
  const head = `| ${columns.map(cell).join(' | ')} |\n| ${columns.map(() => '---').join(' | ')} |\n`;
  const rows = (r.rows ?? []).map((row) => `| ${row.map((v) => (v === null ? '*NULL*' : cell(v))).join(' | ')} |\n`).join('');
  return head + rows;
}

/** A Markdown transcript of the runs (one section per permutation). */
export function transcriptMarkdown(spec: Spec, runs: PermutationRun[], title = 'Scenario'): string {
  let out = `# ${cell(title)}\n\n`;
  if (spec.setup.length > 0) out += `## Setup\n\n${fenced(spec.setup.map(dedent).join('\n'))}\n`;
  const sessionSetups = spec.sessions.filter((s) => s.setup !== undefined);
  if (sessionSetups.length > 0) {
    out += sessionSetups.map((s) => `Session **${cell(s.name)}** setup: \`${cell(s.setup!)}\`\n`).join('\n') + '\n';
  }
  for (const run of runs) {
    out += `## Permutation: \`${run.permutation}\`\n\n`;
    out += `| # | ${spec.sessions.map((s) => `Session ${cell(s.name)}`).join(' | ')} | Outcome |\n`;
    out += `|---|${spec.sessions.map(() => '---').join('|')}|---|\n`;
    const details: string[] = [];
    run.records.forEach((r, i) => {
      const e = r.event;
      const text =
        e.outcome === 'waiting'
          ? `\`${cell(r.sql)}\``
          : e.completedAfterStep !== undefined
            ? `*${cell(e.step)} completes*`
            : `\`${cell(r.sql)}\``;
      const outcome =
        e.outcome === 'waiting'
          ? '⏳ waiting'
          : e.outcome === 'error'
            ? `❌ ERROR ${e.sqlstate ?? ''}: ${cell(e.message ?? '')}`
            : `✔ ${cell((e.commands ?? []).join(', ') || 'ok')}`;
      out += `| ${i + 1} | ${spec.sessions.map((s) => (s.name === e.session ? text : '')).join(' | ')} | ${outcome} |\n`;
      if (r.result && e.outcome !== 'waiting') {
        for (const res of r.result.results)
          if ((res.columns?.length ?? 0) > 0) details.push(`Step ${i + 1} (${e.step}) returned:\n\n${resultTable(res)}`);
        if (e.detail) details.push(`Step ${i + 1} (${e.step}) DETAIL:\n\n${fenced(e.detail, 'text')}`);
      }
    });
    out += '\n';
    if (details.length > 0) out += details.join('\n') + '\n';
  }
  return out;
}
