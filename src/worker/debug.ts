/** Entry of the debug page: loads the worker backend, which installs window.__lockstep with ?debug. */
import '../ui/backend-worker';
