/**
 * The lab's syntax-check Worker: PostgreSQL's parser (libpg-query) off the main thread, so
 * typing never waits for wasm. Answers every CheckRequest with one CheckReply.
 */
import './wasmShim';
import { loadChecker, syntaxProblem, type CheckReply, type CheckRequest } from './sqlcheck';

const ready = loadChecker();

self.onmessage = async (ev: MessageEvent<CheckRequest>) => {
  await ready;
  const reply: CheckReply = { id: ev.data.id, problems: ev.data.texts.map(syntaxProblem) };
  self.postMessage(reply);
};
