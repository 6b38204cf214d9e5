/** The current hash route, kept in sync with `location.hash`. */
import { formatRoute, parseRoute, type Route } from '../model/route';

export class Router {
  route = $state<Route>({ name: 'home' });
  // An equal route is not assigned again: it would rerun every effect that reads the route.
  #onhash = () => {
    const next = parseRoute(location.hash);
    if (formatRoute(next) !== formatRoute(this.route)) this.route = next;
  };

  /** Starts listening to hashchange; returns the stop function. */
  start(): () => void {
    this.route = parseRoute(location.hash);
    window.addEventListener('hashchange', this.#onhash);
    return () => window.removeEventListener('hashchange', this.#onhash);
  }

  /**
   * Rewrites the URL for `route` without a history entry or hashchange (step sync). A navigation
   * whose hashchange has not been handled yet wins: the URL already names where the learner is
   * going, so it is taken as the route now instead of being overwritten.
   */
  replace(route: Route): void {
    if (formatRoute(parseRoute(location.hash)) !== formatRoute(this.route)) {
      this.#onhash();
      return;
    }
    const hash = formatRoute(route);
    if (location.hash !== hash) history.replaceState(history.state, '', hash);
    this.route = route;
  }
}
