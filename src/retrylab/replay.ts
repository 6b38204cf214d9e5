/**
 * A recorded lab schedule as an isolationtester spec: one session per worker, one step per
 * statement sent, and one permutation in the order the lab sent them. Replaying it on the
 * simulator and on real PostgreSQL cross-checks the lab's interleaving statement by statement.
 */
import type { Spec } from '../scenario/types';
import type { LabConfig, ScheduledStatement } from './types';
import { workloadOf } from './workloads';

/** The spec that replays `schedule` (from runLab with recordSchedule). */
export function scheduleToSpec(cfg: LabConfig, schedule: readonly ScheduledStatement[]): Spec {
  const workload = workloadOf(cfg.workload);
  const sessions = Array.from({ length: cfg.workers }, (_, i) => ({ name: `w${i + 1}`, steps: [] as { name: string; sql: string }[] }));
  const order: string[] = [];
  for (const s of schedule) {
    const session = sessions[s.worker];
    const name = `${session.name}_${session.steps.length + 1}`;
    session.steps.push({ name, sql: s.sql });
    order.push(name);
  }
  return {
    setup: [workload.setup(cfg)],
    teardown: workload.teardown,
    sessions: sessions.filter((s) => s.steps.length > 0),
    permutations: [{ steps: order.map((step) => ({ step, blockers: [] })) }],
  };
}
