/**
 * Builds src/worker/pgdata.tgz: a PGlite data directory with the engine's objects installed, so
 * the app starts PGlite from it instead of running initdb in the browser (DESIGN.md: loadDataDir
 * is about 4× faster). Run by `npm start` and `npm run build` (prestart/prebuild).
 */
import { writeFileSync } from 'node:fs';
import { PgliteExecutor } from '../src/engine';

const dump = await PgliteExecutor.dumpFresh();

writeFileSync('src/worker/pgdata.tgz', Buffer.from(await dump.arrayBuffer()));
console.log(`src/worker/pgdata.tgz: ${dump.size} bytes`);
