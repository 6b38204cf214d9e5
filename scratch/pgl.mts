import { PGlite } from '@electric-sql/pglite';
const db = await PGlite.create();
console.log((await db.query("select version()")).rows);
console.log((await db.query("select name, setting, context from pg_settings where name in ('log_lock_waits','log_lock_failures','log_min_error_statement')")).rows);
