/**
 * The one set of syntax classes the app colours code with: CodeMirror's lab editor
 * (SqlEditor.svelte) and the read-only code in session panes and snippets both map Lezer
 * highlight tags through `syntaxClasses`, and app.css colours the classes with the theme's
 * --syn-* variables (each at least 4.5:1 on the code and pane backgrounds in both themes).
 */
import { tagHighlighter, tags } from '@lezer/highlight';

/** Lezer tags to `syn-*` class names; a tag also matches through its parents (controlKeyword → keyword). */
export const syntaxClasses = tagHighlighter([
  { tag: [tags.keyword, tags.operatorKeyword, tags.modifier], class: 'syn-keyword' },
  { tag: [tags.string, tags.special(tags.string)], class: 'syn-string' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], class: 'syn-number' },
  { tag: tags.comment, class: 'syn-comment' },
  { tag: [tags.typeName, tags.standard(tags.name)], class: 'syn-type' },
  { tag: tags.invalid, class: 'syn-invalid' },
]);
