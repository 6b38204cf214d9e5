/**
 * libpg-query looks for its wasm next to the script that loads it (the worker bundle), where a
 * bundler does not put it. This redirects that one fetch to the URL Vite emits for the file.
 * Imported first by worker.ts, before anything loads the parser.
 */
import parserWasmUrl from 'libpg-query/wasm/libpg-query.wasm?url';

const realFetch = globalThis.fetch.bind(globalThis);

globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return realFetch(/\/libpg-query\.wasm(\?.*)?$/.test(url) ? parserWasmUrl : input, init);
};
