import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'fflate';
import {
  checkScenario,
  decodeScenario,
  encodeScenario,
  fromBase64Url,
  MAX_SHARE_CODE,
  MAX_SHARE_RAW,
  ShareError,
  shareUrl,
  toBase64Url,
  type ShareFailure,
} from './share';
import { blankScenario, type LabScenario } from './labScenario';

const linksDir = join(__dirname, '..', '..', 'tests', 'fixtures', 'lab', 'links');

const scenario: LabScenario = {
  title: 'Transfer — перевод',
  setup: ['CREATE TABLE accounts (id int PRIMARY KEY, balance int);'],
  teardown: 'DROP TABLE accounts;',
  sessions: [
    { name: 'A', setup: "SET deadlock_timeout = '1s';", steps: [{ name: 'a1', sql: 'BEGIN;' }] },
    { name: 'B', steps: [{ name: 'b1', sql: 'BEGIN;' }] },
  ],
  order: 'a1 b1',
};

/** A code for arbitrary JSON text (bypassing the encoder's typing). */
const codeOf = (text: string) => toBase64Url(deflateSync(new TextEncoder().encode(text)));
const stageOf = (code: string): ShareFailure | 'ok' => {
  try {
    decodeScenario(code);
    return 'ok';
  } catch (e) {
    if (e instanceof ShareError) return e.stage;
    throw e;
  }
};

describe('base64url', () => {
  it.each([0, 1, 2, 3, 4, 5, 255])('round-trips %i bytes', (n) => {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 97 + 13) & 0xff);
    const text = toBase64Url(bytes);
    expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
    expect([...fromBase64Url(text)]).toEqual([...bytes]);
  });
});

describe('share links', () => {
  it('round-trips a scenario, Unicode included, and does not mutate it', () => {
    const before = structuredClone(scenario);
    expect(decodeScenario(encodeScenario(scenario))).toEqual(scenario);
    expect(scenario).toEqual(before);
  });

  it('builds the URL on the page address without its old fragment', () => {
    const url = shareUrl('https://example.org/lockstep/index.html#/lessons/x', blankScenario());
    expect(url).toMatch(/^https:\/\/example\.org\/lockstep\/index\.html#\/lab\?s=[A-Za-z0-9_-]+$/);
    expect(decodeScenario(url.split('s=')[1])).toEqual(blankScenario());
  });

  it('keeps script tags as plain text', () => {
    const hostile = {
      ...scenario,
      title: '<script>alert(1)</script>',
      sessions: [{ name: '<img src=x onerror=alert(1)>', steps: [{ name: 's', sql: '</textarea><script>x()</script>' }] }],
    };
    expect(decodeScenario(encodeScenario(hostile))).toEqual(hostile);
  });

  const good = JSON.stringify({ v: 1, ...scenario });
  it.each<{ name: string; code: () => string; stage: ShareFailure }>([
    { name: 'empty', code: () => '', stage: 'missing' },
    { name: 'oversized code', code: () => 'A'.repeat(MAX_SHARE_CODE + 4), stage: 'too-long' },
    { name: 'a 70k-character link', code: () => 'A'.repeat(70_000), stage: 'too-long' },
    { name: 'bad characters', code: () => encodeScenario(scenario).slice(0, 10) + '+/!', stage: 'base64' },
    { name: 'impossible length', code: () => 'AAAAA', stage: 'base64' },
    { name: 'truncated', code: () => encodeScenario(scenario).slice(0, 40), stage: 'deflate' },
    { name: 'not deflate', code: () => toBase64Url(new TextEncoder().encode('hello world, plain text')), stage: 'deflate' },
    {
      name: 'deflate bomb',
      code: () => toBase64Url(deflateSync(new Uint8Array(MAX_SHARE_RAW * 8).fill(32), { level: 9 })),
      stage: 'too-large',
    },
    { name: 'not UTF-8', code: () => toBase64Url(deflateSync(Uint8Array.from([0xff, 0xfe, 0xfd]))), stage: 'utf8' },
    { name: 'not JSON', code: () => codeOf('{"v":1,'), stage: 'json' },
    { name: 'JSON array', code: () => codeOf('[]'), stage: 'schema' },
    { name: 'wrong version', code: () => codeOf(good.replace('"v":1', '"v":2')), stage: 'schema' },
    { name: 'title not a string', code: () => codeOf(good.replace('"title":"Transfer — перевод"', '"title":42')), stage: 'schema' },
    { name: 'extra field', code: () => codeOf(good.replace('{"v":1', '{"v":1,"run":"DROP TABLE x"')), stage: 'schema' },
    { name: 'prototype key', code: () => codeOf(good.replace('{"v":1', '{"v":1,"__proto__":{"x":1}')), stage: 'schema' },
    { name: 'no sessions', code: () => codeOf(good.replace(/"sessions":\[.*\],"order"/, '"sessions":[],"order"')), stage: 'schema' },
    { name: 'step sql is a number', code: () => codeOf(good.replace('"sql":"BEGIN;"', '"sql":1')), stage: 'schema' },
    { name: 'step is null', code: () => codeOf(good.replace('{"name":"b1","sql":"BEGIN;"}', 'null')), stage: 'schema' },
    {
      name: 'nine sessions',
      code: () =>
        codeOf(
          JSON.stringify({
            v: 1,
            ...scenario,
            sessions: Array.from({ length: 9 }, (_, i) => ({ name: `s${i}`, steps: [{ name: `x${i}`, sql: 'SELECT 1;' }] })),
          }),
        ),
      stage: 'schema',
    },
  ])('rejects $name as $stage', ({ code, stage }) => {
    expect(stageOf(code())).toBe(stage);
  });

  it('names the path of a schema problem', () => {
    expect(() =>
      checkScenario({ v: 1, title: '', setup: [], order: '', sessions: [{ name: 'a', steps: [{ name: 'x', sql: 5 }] }] }),
    ).toThrow('sessions[0].steps[0].sql: expected a string');
  });

  const fixtures = readdirSync(linksDir).filter((f) => f.endsWith('.link'));
  it.each(fixtures)('fixture %s fails at the stage its name says', (file) => {
    const expected = file
      .replace(/^\d+-/, '')
      .replace(/--.*$/, '')
      .replace(/\.link$/, '');
    expect(stageOf(readFileSync(join(linksDir, file), 'utf8').trim())).toBe(expected);
  });
});
