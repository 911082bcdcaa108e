// Every Chinese text the server can send has an English translation in the console's table
// (web/src/i18n/server-messages.ts), and the relay's own English table agrees with it.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { extractServerMessages } from '../helpers/server-messages.js';
import { RELAY_MESSAGES_EN } from '../../src/lib/relay-english.js';

const SERVER_SRC = join(import.meta.dirname, '../../src');
const WEB_TABLE = join(import.meta.dirname, '../../../web/src/i18n/server-messages.ts');

// the sources of the errors the relay answers (not only the console): their texts must be in the relay's table
const RELAY_ERROR_SOURCES = [
  'relay/auth.ts',
  'relay/attempt.ts',
  'relay/index.ts',
  'relay/multipart.ts',
  'relay/rate-limit.ts',
  'relay/pipeline/',
  'services/pricing/',
  'services/channel-protocols.ts',
  'lib/error-answer.ts',
  'lib/input.ts',
];

const FULL_WIDTH = /[\u3000-\u303f\uff00-\uffef\u3400-\u9fff]/;

async function webTable(): Promise<Record<string, string>> {
  // a runtime path: the web file is outside the server's TypeScript project
  const mod = (await import(pathToFileURL(WEB_TABLE).href)) as { SERVER_MESSAGES_EN: Record<string, string> };
  return mod.SERVER_MESSAGES_EN;
}

const placeholders = (s: string) => [...s.matchAll(/\{(\d+)\}/g)].map((m) => m[1]);

describe('server messages in English', () => {
  const messages = extractServerMessages(SERVER_SRC);

  it('finds the server texts, plain and templated', () => {
    const texts = messages.map((m) => m.text);
    expect(texts).toContain('SMTP 服务器未配置');
    expect(texts).toContain('通过兑换码充值 {0}，兑换码ID {1}');
    expect(messages.length).toBeGreaterThan(250);
  });

  it('every Chinese text in server/src has an English translation in the console table', async () => {
    const table = await webTable();
    const missing = messages.filter((m) => table[m.text] === undefined).map((m) => `${m.places[0]}  ${m.text}`);
    expect(missing).toEqual([]);
  });

  it('the translations use only the placeholders of their key and no Chinese or full-width characters', async () => {
    const table = await webTable();
    // a translation may drop a value (new-api's bilingual texts name the model twice), never invent one
    const bad = Object.entries(table).filter(
      ([zh, en]) => FULL_WIDTH.test(en) || placeholders(en).some((p) => !placeholders(zh).includes(p)),
    );
    expect(bad).toEqual([]);
  });

  it('the relay has English for each of its error texts, the same as the console', async () => {
    const table = await webTable();
    const relayTexts = messages.filter((m) => m.places.some((p) => RELAY_ERROR_SOURCES.some((s) => p.startsWith(s))));
    expect(relayTexts.length).toBeGreaterThan(20);
    expect(relayTexts.filter((m) => RELAY_MESSAGES_EN[m.text] === undefined).map((m) => m.text)).toEqual([]);
    const differing = Object.entries(RELAY_MESSAGES_EN).filter(([zh, en]) => table[zh] !== en);
    expect(differing).toEqual([]);
  });
});
