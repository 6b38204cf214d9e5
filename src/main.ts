import './app.css';
import { boot } from './ui/boot';
import { createWorkerBackend, lessonCatalog } from './ui/backend-worker';

boot({
  target: document.getElementById('app')!,
  catalog: lessonCatalog,
  createBackend: () => createWorkerBackend(),
});
