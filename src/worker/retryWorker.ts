/**
 * The retry lab's Web Worker: hands the page's requests to a RetryHost (retryHost.ts) and posts
 * its replies back. Only this file knows it runs in a Worker.
 */
import './wasmShim';
import { createWorkerExecutor } from './datadir';
import { RetryHost } from './retryHost';
import type { RetryReply, RetryRequest } from './retryProtocol';

const host = new RetryHost(createWorkerExecutor, (m: RetryReply) => self.postMessage(m));

self.onmessage = (ev: MessageEvent<RetryRequest>) => {
  void host.handle(ev.data);
};
