import re
CUR='.scratch/cur/'
def rd(p): return open(p).read()
def rep(s, a, b, p=''):
    assert a in s, (p, a[:80]); return s.replace(a, b, 1)
def cur_slice(p, start, end, include_end=True):
    c = rd(CUR+p); i = c.index(start); j = c.index(end, i)
    return c[i:j+len(end)] if include_end else c[i:j]

# app.css: only my edits (check it was not reformatted) -> take current
open('src/app.css','w').write(rd(CUR+'src/app.css'))

# i18n
for p, marker in (('src/ui/i18n/en.ts', '  // Page layout area (stage)'), ('src/ui/i18n/ru.ts', '  // Раздел вёрстки (stage)')):
    block = cur_slice(p, marker, '  dev: {', include_end=False)
    s = rd(p); s = rep(s, '  dev: {', block + '  dev: {', p); open(p,'w').write(s)

# App.svelte
p='src/ui/App.svelte'; s=rd(p)
s=rep(s,"p.needsAnswer = (item) => !!openedLesson && !!item.predict && prefs.answerOf(openedLesson, item.predict.key) === undefined;",
 "p.needsAnswer = (item) =>\n        !!openedLesson && !!item.predict && (prefs.hideAnswers || prefs.answerOf(openedLesson, item.predict.key) === undefined);",p)
s=rep(s,"  .presenter .tagline { display: none; }","""  /* Presenter mode: one screen, no page scroll; the header shrinks to one 18 px row. */
  .app.presenter { height: 100vh; min-height: 0; overflow: hidden; }
  .presenter .top { font-size: 0.75em; padding: 0.1em 0.4em; gap: 0.2em 0.6em; }
  .presenter .top button, .presenter .top select { padding: 0 0.35em; }
  .presenter .tagline, .presenter nav { display: none; }
  .presenter main { flex: 1; min-height: 0; padding: 0.2em 0.4em; display: flex; flex-direction: column; overflow: auto; }
  .presenter .open-in-lab { display: none; }""",p)
open(p,'w').write(s)

# PredictPanel
p='src/ui/components/PredictPanel.svelte'; s=rd(p)
s=rep(s,"""    disabled?: boolean;
  }
  let { asking = null, outcome = null, onanswer, disabled = false }: Props = $props();""","""    disabled?: boolean;
    /** Classroom mode: offer "reveal the answer" (runs the step without an answer of the presenter's own). */
    reveal?: boolean;
  }
  let { asking = null, outcome = null, onanswer, disabled = false, reveal = false }: Props = $props();""",p)
s=rep(s,"""      <button type="button" data-testid="predict-skip" {disabled} onclick={() => onanswer?.(null)}>{t.skip}</button>""","""      {#if reveal}<button type="button" data-testid="predict-reveal" {disabled} onclick={() => onanswer?.(null)}>{prefs.t.stage.reveal}</button>{/if}
      <button type="button" data-testid="predict-skip" {disabled} onclick={() => onanswer?.(null)}>{t.skip}</button>""",p)
open(p,'w').write(s)

# LockTable
p='src/ui/components/LockTable.svelte'; s=rd(p)
s=rep(s,'    <div class="scroll">','    <!-- svelte-ignore a11y_no_noninteractive_tabindex (focusable so a keyboard user can scroll the wide table) -->\n    <div class="scroll" tabindex="0" role="region" aria-label={t.title}>',p)
open(p,'w').write(s)

ig = "<!-- svelte-ignore a11y_no_noninteractive_tabindex (a scrollable region must be reachable by keyboard) -->\n"
p='src/ui/retry/RetryLab.svelte'; s=rd(p)
s=rep(s,'    <div class="scroll">','    '+ig+'    <div class="scroll" tabindex="0" role="region" aria-label={t.results}>',p)
s=rep(s,'<pre class="code" data-testid="retry-code">',ig+'  <pre class="code" data-testid="retry-code" tabindex="0">',p)
open(p,'w').write(s)

p='src/ui/lab/LabEditor.svelte'; s=rd(p)
s=rep(s,'<input type="text" class="order-input" value={sc.order}','<input type="text" class="order-input" aria-labelledby="{uid}-order" value={sc.order}',p)
open(p,'w').write(s)

p='src/ui/lab/SqlEditor.svelte'; s=rd(p)
hl = cur_slice(p, "  import { tags } from '@lezer/highlight';", "  ]);")
s=rep(s,"""  import { bracketMatching, syntaxHighlighting, defaultHighlightStyle } from '@codemirror/language';""","""  import { bracketMatching, syntaxHighlighting, HighlightStyle } from '@codemirror/language';\n"""+hl,p)
s=rep(s,"""        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),""","""        syntaxHighlighting(highlight),""",p)
open(p,'w').write(s)

# WaitForGraph
p='src/ui/components/WaitForGraph.svelte'; s=rd(p)
s=rep(s,"""  let clientWidth = $state(0);
  const width = $derived(clientWidth > 0 ? clientWidth : fallbackWidth);
  const height = $derived(
    clientWidth > 0 ? Math.round(Math.min(380, Math.max(210, width * (prefs.presenter ? 0.4 : 0.5)))) : fallbackHeight,
  );
  const R = $derived(prefs.presenter ? 40 : 36);""","""  let clientWidth = $state(0);
  let figure = $state<HTMLElement | null>(null);
  // The presenter stage scales its type with the screen: node radius, height and edge bends follow the font size.
  let em = $state(16);
  $effect(() => {
    void clientWidth;
    void prefs.presenter;
    if (figure) em = parseFloat(getComputedStyle(figure).fontSize) || 16;
  });
  const width = $derived(clientWidth > 0 ? clientWidth : fallbackWidth);
  const height = $derived(
    clientWidth === 0
      ? fallbackHeight
      : prefs.presenter
        ? Math.round(Math.min(em * 12, Math.max(em * 10, width * 0.33)))
        : Math.round(Math.min(380, Math.max(210, width * 0.5))),
  );
  const R = $derived(prefs.presenter ? Math.round(em * 2.1) : 36);
  /** Presenter labels break before " on " so a wait label is narrow enough to sit between two nodes. */
  const labelLines = (label: string) => (prefs.presenter ? label.split(/ (?=on )/) : [label]);""",p)
s=rep(s,"""edgeGeometry([...model.edges, ...broken, ...rw], positions, R, { bend: 46, labelLift: 10 })""","""edgeGeometry([...model.edges, ...broken, ...rw], positions, R, prefs.presenter ? { bend: R * 1.2, labelLift: R * 0.4 + em * 1.4 } : { bend: 46, labelLift: 10 })""",p)
s=rep(s,"""<figure class="wfg" bind:clientWidth>""","""<figure class="wfg" bind:clientWidth bind:this={figure}>""",p)
s=rep(s,"""            <text x={g.label.x} y={g.label.y} text-anchor="middle" dy="0.35em">{e.label}</text>
          </g>
        {/if}
      {/each}
    </g>
    <g class="edges rw">""","""            <text x={g.label.x} y={g.label.y} text-anchor="middle" dy="{0.35 - (labelLines(e.label).length - 1) * 0.55}em">{#each labelLines(e.label) as l, i (i)}<tspan x={g.label.x} dy={i ? '1.1em' : undefined}>{l}</tspan>{/each}</text>
          </g>
        {/if}
      {/each}
    </g>
    <g class="edges rw">""",p)
s=rep(s,"""              <text class="state" y={R + 16} text-anchor="middle">""","""              <text class="state" y={R + (prefs.presenter ? em : 16)} text-anchor="middle">""",p)
s=rep(s,"""              {#if n.victim}<text class="victim-label" y={-R - 12} text-anchor="middle">""","""              {#if n.victim}<text class="victim-label" y={-R - (prefs.presenter ? em * 0.5 : 12)} text-anchor="middle">""",p)
s=rep(s,"""  @media (prefers-reduced-motion: reduce) {
    .node, .edge path { transition: none; }
  }""","""  @media (prefers-reduced-motion: reduce) {
    .node, .edge path { transition: none; }
  }
  /* Presenter stage: nothing under 18 px (0.75em of the 24 px root). */
  :global(.presenter) svg { box-sizing: border-box; }
  :global(.presenter) .sub, :global(.presenter) .edge text, :global(.presenter) .state, :global(.presenter) .ssi-committed { font-size: 0.75em; }
  /* The stage's panes show each state in words and the edges carry their labels: the node state line and the legend would only collide with them. */
  :global(.presenter) .legend, :global(.presenter) .node .state { display: none; }""",p)
open(p,'w').write(s)

# PlayerView
p='src/ui/components/PlayerView.svelte'; s=rd(p)
s=rep(s,"""  import CodePanel from './CodePanel.svelte';
""","""  import CodePanel from './CodePanel.svelte';
  import StagePane from './StagePane.svelte';
  import WaitCell from './WaitCell.svelte';
""",p)
s=rep(s,"""  let help = $state(false);""","""  let help = $state(false);
  // Presenter stage: the full matrices replace the graph on demand.
  let showMatrices = $state(false);""",p)
s=rep(s,"""      case '?':
        help = true;
        break;""","""      case '?':
        help = true;
        break;
      case 'h':
      case 'H':
        if (prefs.presenter) prefs.toggleHideAnswers();
        break;""",p)
s=rep(s,"""    <span class="pos" data-testid="step-position" aria-live="polite">{t.position(player.cursor, player.total)}</span>""","""    <span class="pos" data-testid="step-position" aria-live="polite">{t.position(player.cursor, player.total)}</span>
    {#if prefs.presenter}
      <button type="button" role="switch" aria-checked={prefs.hideAnswers} data-testid="hide-answer" title={prefs.t.stage.hideAnswerHint} aria-keyshortcuts="H" onclick={() => prefs.toggleHideAnswers()}>
        <span aria-hidden="true">{prefs.hideAnswers ? '◉' : '○'}</span> {prefs.t.stage.hideAnswer}
      </button>
    {/if}""",p)
branch = cur_slice(p, "  {#if st && snap && prefs.presenter}", "  {:else if st && snap}")
s=rep(s,"""  {#if st && snap}
    <div class="guide\"""", branch + """
    <div class="guide\"""",p)
css = cur_slice(p, "  /*\n   * Presenter stage: the root font", "</style>", include_end=False)
old_css = """  /* Presenter mode (1280×720): one control row, denser side column. */
  :global(.presenter) .controls { gap: 0.25rem; }
  :global(.presenter) .controls h2 { font-size: 0.9em; max-width: 16rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  :global(.presenter) .controls label { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0, 0, 0, 0); }
  :global(.presenter) .side { gap: 0.3rem; }
"""
s=rep(s, old_css, css, p)
open(p,'w').write(s)
