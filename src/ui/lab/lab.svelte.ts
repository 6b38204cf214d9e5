/**
 * The lab's document state (a runes class): the scenario being edited, its problems (derived,
 * so validation follows every keystroke), and the edits the editor offers. Renaming or removing
 * a step keeps the order in step.
 */
import {
  blankScenario,
  freshSessionName,
  freshStepName,
  scenarioIssues,
  MAX_LAB_SESSIONS,
  type IssueAt,
  type LabIssue,
  type LabScenario,
} from '../../scenario/labScenario';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `order` with every whole-token `from` replaced by `to` (to = '' removes the token and its marker). */
export function renameInOrder(order: string, from: string, to: string): string {
  if (from === '') return order;
  const token = new RegExp(`(^|[\\s(,])${escapeRe(from)}(?=$|[\\s(),])`, 'g');
  if (to !== '') return order.replace(token, (_, pre: string) => `${pre}${to}`);
  const withMarker = new RegExp(`(^|\\s)${escapeRe(from)}(\\([^)]*\\))?(?=$|\\s)`, 'g');
  return order.replace(withMarker, '$1').replace(/\s+/g, ' ').trim();
}

export class LabState {
  scenario = $state<LabScenario>(blankScenario());
  readonly issues: LabIssue[] = $derived(scenarioIssues(this.scenario));
  readonly playable = $derived(this.issues.length === 0);

  constructor(initial?: LabScenario) {
    if (initial) this.scenario = structuredClone(initial);
  }

  /** Problems at one place of the editor. */
  issuesAt(match: (at: IssueAt) => boolean): LabIssue[] {
    return this.issues.filter((i) => match(i.at));
  }

  /** Replaces the whole scenario (template, import, link, saved, recent); `sc` may be reactive state (a proxy). */
  load(sc: LabScenario): void {
    this.scenario = $state.snapshot(sc) as LabScenario;
  }

  /** A plain copy of the current scenario. */
  snapshot(): LabScenario {
    return $state.snapshot(this.scenario) as LabScenario;
  }

  addSession(): void {
    if (this.scenario.sessions.length >= MAX_LAB_SESSIONS) return;
    const name = freshSessionName(this.scenario);
    const step = freshStepName(this.scenario, name);
    this.scenario.sessions.push({ name, steps: [{ name: step, sql: '' }] });
    this.scenario.order = `${this.scenario.order} ${step}`.trim();
  }

  removeSession(i: number): void {
    const [gone] = this.scenario.sessions.splice(i, 1);
    for (const st of gone?.steps ?? []) this.scenario.order = renameInOrder(this.scenario.order, st.name, '');
  }

  moveSession(i: number, by: -1 | 1): void {
    const j = i + by;
    const list = this.scenario.sessions;
    if (j < 0 || j >= list.length) return;
    [list[i], list[j]] = [list[j], list[i]];
  }

  renameSession(i: number, name: string): void {
    this.scenario.sessions[i].name = name;
  }

  addStep(si: number): void {
    const s = this.scenario.sessions[si];
    const name = freshStepName(this.scenario, s.name.trim() || `s${si + 1}`);
    s.steps.push({ name, sql: '' });
    this.scenario.order = `${this.scenario.order} ${name}`.trim();
  }

  removeStep(si: number, k: number): void {
    const [gone] = this.scenario.sessions[si].steps.splice(k, 1);
    if (gone) this.scenario.order = renameInOrder(this.scenario.order, gone.name, '');
  }

  moveStep(si: number, k: number, by: -1 | 1): void {
    const steps = this.scenario.sessions[si].steps;
    const j = k + by;
    if (j < 0 || j >= steps.length) return;
    [steps[k], steps[j]] = [steps[j], steps[k]];
  }

  renameStep(si: number, k: number, name: string): void {
    const step = this.scenario.sessions[si].steps[k];
    const clash = this.scenario.sessions.some((s) => s.steps.some((st) => st !== step && st.name === step.name));
    // An emptied name (mid-retype) leaves the order alone rather than dropping the step from it.
    if (!clash && name !== '' && step.name !== '') this.scenario.order = renameInOrder(this.scenario.order, step.name, name);
    step.name = name;
  }

  setStepSql(si: number, k: number, sql: string): void {
    this.scenario.sessions[si].steps[k].sql = sql;
  }

  /** Appends a step to the order (the order chips). */
  appendToOrder(step: string): void {
    this.scenario.order = `${this.scenario.order.trimEnd()} ${step}`.trim();
  }
}
