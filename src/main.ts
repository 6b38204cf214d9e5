import './app.css';
import { boot } from './ui/boot';
import { staticCatalog } from './ui/backend';

// No lessons are bundled and no engine is wired yet: the lead replaces these two with the
// lessons/ catalog and the Worker-backed PlayerBackend. No fake engine in the app.
boot({
  target: document.getElementById('app')!,
  catalog: staticCatalog([]),
  createBackend: null,
});
