/** The bare page's Worker: PGlite with the app's options, from the app's prebuilt data directory. */
import { PGlite } from '@electric-sql/pglite';
import { pageinspect } from '@electric-sql/pglite/contrib/pageinspect';
import pgdataUrl from '../../src/worker/pgdata.tgz?url';

try {
  const dataDir = await (await fetch(pgdataUrl)).blob();
  const db: PGlite = await PGlite.create({
    extensions: { pageinspect },
    postgresqlconf: ['max_prepared_transactions = 16', 'max_connections = 20', 'autovacuum_worker_slots = 1', 'max_wal_senders = 0'],
    loadDataDir: dataDir,
  } as never);
  await db.query('SELECT 1');
  self.postMessage({ ok: true });
} catch (e) {
  self.postMessage({ ok: false, error: e instanceof Error ? e.message : String(e) });
}
