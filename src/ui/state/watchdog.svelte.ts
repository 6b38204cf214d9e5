/**
 * The engine request that has overrun its time limit, if any (a runes store): the worker
 * client reports it, the countdown banner shows it and offers "keep waiting" or "stop".
 */
import type { Overdue } from '../../worker/client';

class WatchdogState {
  overdue = $state<Overdue | null>(null);
}

/** The app's one watchdog state (one engine request runs at a time per player). */
export const watchdog = new WatchdogState();
