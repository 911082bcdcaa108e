// Cloudflare Workers AI (type 39) models served only by `/client/v4/accounts/{account}/ai/run/{model}`, through the
// gateway with the official `openai` client against a strict mock of that API (helpers/mock-cloudflare-run.ts):
// image generation (FLUX's JSON answer, Stable Diffusion's PNG bytes) charged the images price to the unit, speech to
// text (the audio bytes as the body, or base64 JSON for whisper-large-v3-turbo) charged the tokens of the text;
// what Cloudflare cannot do (n > 1, srt) refused before anything is sent; its AiError reaching the client, nothing
// charged.
import { APIError, toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { MockCloudflareRun } from '../helpers/mock-cloudflare-run.js';
import { client } from '../relay/fixtures.js';
import { countTextTokens } from '../../src/services/tokenizer.js';
import { expectCharged, expectNothingCharged, snapshot, vendorSuite } from './vendor-gateway.js';

const KEY = 'Xk9pR2mQ7vL4sT8wZ1nB5cD3fG6hJ0aE_yU';
const ACCOUNT = '023e105f4ecef8ad9ca31a8372d0c353';
const FLUX = '@cf/black-forest-labs/flux-1-schnell';
const SDXL = '@cf/stabilityai/stable-diffusion-xl-base-1.0';
const WHISPER = '@cf/openai/whisper';
const TURBO = '@cf/openai/whisper-large-v3-turbo';
const MODELS = [FLUX, SDXL, WHISPER, TURBO, '@cf/unknown/model'];
const recorded = (file: string) =>
  readFileSync(new URL(`../../src/relay/providers/cloudflare/__fixtures__/${file}`, import.meta.url));
const TRANSCRIPT = JSON.parse(recorded('run-transcript.json').toString('utf8')).result;
const AUDIO = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00fake-pcm', 'latin1');
/** the images price with ratio 1: $0.0025 an image × size ratio, in quota units (500,000 = $1) */
const IMAGE_1024 = 1250;
const IMAGE_512 = 562; // × 0.45, truncated

describe('Cloudflare Workers AI /ai/run models', () => {
  const suite = vendorSuite({
    kind: 'sqlite',
    mock: () => MockCloudflareRun.start(ACCOUNT, KEY),
    channel: { type: 39, key: KEY, other: ACCOUNT, models: MODELS },
    models: MODELS,
  });

  it('the mock refuses what Cloudflare refuses: a wrong token, JSON to Whisper, a prompt of the wrong type', async () => {
    const run = (model: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${suite.mock.url}/client/v4/accounts/${ACCOUNT}/ai/run/${model}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
        body,
      });
    expect((await run(FLUX, '{"prompt":"x"}', { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await run(WHISPER, '{"audio":"AAAA"}')).status).toBe(400);
    expect((await run(FLUX, '{"prompt":7}')).status).toBe(400);
    expect((await run(FLUX, '{"prompt":"a cat"}')).status).toBe(200);
  });

  it('draws with FLUX through /ai/run: its base64 image as b64_json, charged the images price', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).images.generate({
      model: FLUX,
      prompt: 'a lighthouse at dawn',
      size: '512x512',
      response_format: 'b64_json',
    });
    expect(r.data?.[0].b64_json).toBe(JSON.parse(recorded('run-image.json').toString('utf8')).result.image);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.model).toBe(FLUX);
    expect(JSON.parse(sent.body.toString('utf8'))).toEqual({ prompt: 'a lighthouse at dawn', width: 512, height: 512 });
    await expectCharged(suite, before, { prompt: 0, completion: 0 }, FLUX, IMAGE_512);
  });

  it('gives a client that asked for a URL Stable Diffusion’s PNG as a data URL, in JSON', async () => {
    const before = await snapshot(suite);
    const r = await fetch(`${suite.s.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client(suite.s, suite.key).apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SDXL, prompt: 'cyberpunk cat', response_format: 'url' }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const j = (await r.json()) as any;
    expect(j.data).toEqual([{ url: `data:image/png;base64,${recorded('run-image.png').toString('base64')}` }]);
    await expectCharged(suite, before, { prompt: 0, completion: 0 }, SDXL, IMAGE_1024);
  });

  it('refuses n > 1 before anything is sent, and passes Cloudflare’s AiError on, charging nothing', async () => {
    const before = await snapshot(suite);
    const sentBefore = suite.mock.requests.length;
    const many = await client(suite.s, suite.key)
      .images.generate({ model: FLUX, prompt: 'two cats', n: 2 })
      .catch((e) => e);
    expect(many).toBeInstanceOf(APIError);
    expect((many as APIError).status).toBe(400);
    expect((many as APIError).message).toContain('每次只生成一张图片');
    expect(suite.mock.requests.length).toBe(sentBefore);
    const failed = await client(suite.s, suite.key)
      .images.generate({ model: FLUX, prompt: 'fail' })
      .catch((e) => e);
    expect((failed as APIError).status).toBe(400);
    expect((failed as APIError).message).toContain('Invalid or incomplete input for the model');
    const unknown = await client(suite.s, suite.key)
      .images.generate({ model: '@cf/unknown/model', prompt: 'x' })
      .catch((e) => e);
    expect((unknown as APIError).message).toContain('No such model @cf/unknown/model');
    await expectNothingCharged(suite, before);
  });

  it('transcribes with Whisper: the audio bytes as the body, the text back, charged its tokens', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).audio.transcriptions.create({
      model: WHISPER,
      file: await toFile(AUDIO, 'speech.wav', { type: 'audio/wav' }),
    });
    expect(r.text).toBe(TRANSCRIPT.text);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.headers['content-type']).toBe('application/octet-stream');
    expect(sent.body).toEqual(AUDIO);
    const tokens = countTextTokens(TRANSCRIPT.text, WHISPER);
    expect(tokens).toBeGreaterThan(5);
    await expectCharged(suite, before, { prompt: tokens, completion: 0 }, WHISPER);
  });

  it('answers text and vtt as asked, and refuses srt (which Cloudflare does not write) before sending', async () => {
    const text = await client(suite.s, suite.key).audio.transcriptions.create({
      model: WHISPER,
      file: await toFile(AUDIO, 'speech.wav'),
      response_format: 'text',
    });
    expect(text).toContain('The quick brown fox');
    const vtt = await client(suite.s, suite.key).audio.transcriptions.create({
      model: WHISPER,
      file: await toFile(AUDIO, 'speech.wav'),
      response_format: 'vtt',
    });
    expect(String(vtt)).toBe(TRANSCRIPT.vtt);
    const before = await snapshot(suite);
    const sentBefore = suite.mock.requests.length;
    const srt = await client(suite.s, suite.key)
      .audio.transcriptions.create({ model: WHISPER, file: await toFile(AUDIO, 'speech.wav'), response_format: 'srt' })
      .catch((e) => e);
    expect((srt as APIError).status).toBe(400);
    expect(suite.mock.requests.length).toBe(sentBefore);
    await expectNothingCharged(suite, before);
  });

  it('sends whisper-large-v3-turbo the audio in base64 JSON, a translation with task translate', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).audio.translations.create({
      model: TURBO,
      file: await toFile(AUDIO, 'speech.wav'),
    });
    expect(r.text).toBe(TRANSCRIPT.text);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent.body.toString('utf8'))).toEqual({ audio: AUDIO.toString('base64'), task: 'translate' });
    await expectCharged(suite, before, { prompt: countTextTokens(TRANSCRIPT.text, TURBO), completion: 0 }, TURBO);
  });
});
