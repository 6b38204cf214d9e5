/**
 * The explain page's parser Worker: PostgreSQL's grammar (libpg-query) reads the statements of a
 * pasted deadlock report off the main thread. Answers every ReadRequest with one ReadReply.
 */
import './wasmShim';
import { loadModule, parseSync } from 'libpg-query';
import { readStatement } from '../explain/statements';
import type { ReadReply, ReadRequest } from '../explain/protocol';

const ready = loadModule();

self.onmessage = async (ev: MessageEvent<ReadRequest>) => {
  await ready;
  const reply: ReadReply = { id: ev.data.id, readings: ev.data.sqls.map((sql) => readStatement(sql, parseSync)) };
  self.postMessage(reply);
};
