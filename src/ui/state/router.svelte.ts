/** The current hash route, kept in sync with `location.hash`. */
import { formatRoute, parseRoute, type Route } from '../model/route';

export class Router {
  route = $state<Route>({ name: 'home' });
  #onhash = () => (this.route = parseRoute(location.hash));

  /** Starts listening to hashchange; returns the stop function. */
  start(): () => void {
    this.#onhash();
    window.addEventListener('hashchange', this.#onhash);
    return () => window.removeEventListener('hashchange', this.#onhash);
  }

  /** Rewrites the URL for `route` without a history entry or hashchange (step sync). */
  replace(route: Route): void {
    const hash = formatRoute(route);
    if (location.hash !== hash) history.replaceState(history.state, '', hash);
    this.route = route;
  }
}
