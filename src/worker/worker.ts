/**
 * The engine Web Worker: hosts PGlite, the engine and the player, and answers protocol
 * requests (protocol.ts). Only this file knows it runs in a Worker.
 */
import './wasmShim';
import { Host } from './host';
import { createWorkerExecutor } from './datadir';
import type { Request } from './protocol';

const host = new Host(createWorkerExecutor);

self.onmessage = async (ev: MessageEvent<Request>) => {
  self.postMessage(await host.handle(ev.data));
};
