/**
 * The app-update state shared by the service worker registration and the toast: a new version
 * waits until the learner chooses to reload, so a lesson is never restarted under them.
 */
class AppUpdate {
  /** A new version is installed and waiting. */
  ready = $state(false);
  /** The learner chose "Later": the toast stays closed until the next new version. */
  dismissed = $state(false);
  /** The learner pressed Reload: the next change of the controlling worker reloads the page. */
  requested = false;
  #apply: (() => Promise<void>) | null = null;

  /** Announces a waiting version; `apply` activates it and reloads the page. */
  announce(apply: () => Promise<void>): void {
    this.#apply = apply;
    this.ready = true;
    this.dismissed = false;
  }

  /** Activates the waiting version (the page reloads once it controls the page). */
  async reload(): Promise<void> {
    this.requested = true;
    await this.#apply?.();
  }

  /** Closes the toast; the new version starts on the next visit. */
  later(): void {
    this.dismissed = true;
  }
}

/** The one update state of the page. */
export const appUpdate = new AppUpdate();
