import './app.css';
import { boot } from './ui/boot';
import { createWorkerBackend, engineAnswered, lessonCatalog } from './ui/backend-worker';
import { createExplorer, explorerLanes } from './ui/lab/explorer';
import type { WorkerLike } from './worker/client';
import { startOffline } from './ui/offline/register';

boot({
  target: document.getElementById('app')!,
  catalog: lessonCatalog,
  createBackend: () => createWorkerBackend(),
  createExplorer: () =>
    createExplorer({
      createWorker: () => new Worker(new URL('./worker/worker.ts', import.meta.url), { type: 'module' }) as WorkerLike,
      lanes: explorerLanes(navigator.hardwareConcurrency, (navigator as { deviceMemory?: number }).deviceMemory),
    }),
});

startOffline(engineAnswered);
