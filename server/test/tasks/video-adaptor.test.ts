// The Sora task adaptor's pure parts: the checks and defaults of a create, its price units, the upstream's video
// objects read into task states (a 429, an unknown status or an answer without an id is no state at all), and the
// form sent upstream (untouched, or with the channel's mapped model written in).
import { describe, expect, it } from 'vitest';
import { boundaryOf, formFields } from '../../src/relay/multipart.js';
import { checkSoraSubmit, readSoraFetch, soraPriceUnits } from '../../src/relay/providers/sora/adaptor.js';
import { soraTask } from '../../src/relay/providers/sora/index.js';

const channel = { type: 55, key: 'k', baseUrl: 'http://up.test/', other: '', organization: '' };
const B = 'b0undary';
const form = (fields: Record<string, string>) =>
  Buffer.from(
    Object.entries(fields)
      .map(([k, v]) => `--${B}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') + `--${B}--\r\n`,
  );

describe('sora adaptor', () => {
  it('checks a create and makes its defaults explicit', () => {
    expect(checkSoraSubmit('generate', { prompt: 'p' })).toEqual({
      ok: true,
      model: 'sora-2',
      body: { prompt: 'p', model: 'sora-2', seconds: 4, size: '720x1280' },
    });
    expect(checkSoraSubmit('generate', { prompt: 'p', duration: 8 })).toMatchObject({ body: { seconds: 8 } });
    expect(checkSoraSubmit('generate', { prompt: 'p', seconds: '12', duration: 8 })).toMatchObject({
      body: { seconds: 12 },
    });
    for (const bad of [
      {},
      { prompt: ' ' },
      { prompt: 'p', seconds: 61 },
      { prompt: 'p', seconds: 1.5 },
      { prompt: 'p', size: '720*1280' },
      { prompt: 'p', model: 3 },
      [],
    ])
      expect(checkSoraSubmit('generate', bad).ok, JSON.stringify(bad)).toBe(false);
    expect(checkSoraSubmit('remix', { prompt: 'again', seconds: 'x' })).toEqual({
      ok: true,
      model: '',
      body: { prompt: 'again' },
    });
    const raw = {
      bytes: form({ prompt: 'f', seconds: '8', size: '1792x1024' }),
      contentType: `multipart/form-data; boundary=${B}`,
    };
    expect(checkSoraSubmit('generate', undefined, raw)).toMatchObject({
      ok: true,
      body: { seconds: 8, size: '1792x1024' },
    });
  });

  it('prices seconds × 1.666667 for the large sizes only', () => {
    expect(soraPriceUnits({ seconds: 8, size: '1792x1024' })).toMatchObject({ units: 8, ratioPpm: 1_666_667 });
    expect(soraPriceUnits({ seconds: 8, size: '1024x1792' })).toMatchObject({ ratioPpm: 1_666_667 });
    expect(soraPriceUnits({ seconds: 12, size: '1280x720' })).toMatchObject({ units: 12, ratioPpm: 1_000_000 });
  });

  it('reads statuses: known ones mapped, 429 and unknown ones left alone, 404 a failure', () => {
    expect(readSoraFetch(200, { id: 'v', status: 'in_progress', progress: 42.7 })).toMatchObject([
      { upstreamId: 'v', status: 'IN_PROGRESS', progress: '42%' },
    ]);
    expect(readSoraFetch(200, { id: 'v', status: 'completed', progress: 100 })).toMatchObject([{ status: 'SUCCESS' }]);
    expect(readSoraFetch(200, { id: 'v', status: 'failed', error: { message: 'nope' } })).toMatchObject([
      { status: 'FAILURE', failReason: 'nope' },
    ]);
    expect(readSoraFetch(200, { id: 'v', status: 'cancelled' })).toMatchObject([{ status: 'FAILURE' }]);
    expect(readSoraFetch(200, { id: 'v', status: 'succeeded' })).toBeNull();
    expect(readSoraFetch(200, { status: 'completed' })).toBeNull();
    expect(readSoraFetch(429, { error: { code: 'rate_limit_exceeded' } }, 'v')).toBeNull();
    expect(readSoraFetch(500, {}, 'v')).toBeNull();
    expect(readSoraFetch(404, { error: { message: 'gone' } }, 'v')).toEqual([
      { upstreamId: 'v', status: 'FAILURE', failReason: 'gone', data: null },
    ]);
  });

  it('sends a form untouched, or with the mapped model replaced or added; JSON with OpenAI fields only', async () => {
    const contentType = `multipart/form-data; boundary=${B}`;
    const withModel = form({ model: 'sora-2', prompt: 'p' });
    const body = { model: 'sora-2', prompt: 'p', seconds: 4, size: '720x1280' };
    const same = await soraTask.buildSubmit(channel, 'generate', body, {
      raw: { bytes: withModel, contentType },
      upstreamModel: 'sora-2',
    });
    expect(same).toMatchObject({
      method: 'POST',
      url: 'http://up.test/v1/videos',
      headers: { authorization: 'Bearer k', 'content-type': contentType },
    });
    expect(same.body).toBe(withModel);
    const replaced = await soraTask.buildSubmit(channel, 'generate', body, {
      raw: { bytes: withModel, contentType },
      upstreamModel: 'up-model',
    });
    expect(formFields(replaced.body as Buffer, boundaryOf(contentType)!)).toEqual({ model: 'up-model', prompt: 'p' });
    const added = await soraTask.buildSubmit(channel, 'generate', body, {
      raw: { bytes: form({ prompt: 'p' }), contentType },
      upstreamModel: 'up-model',
    });
    expect(formFields(added.body as Buffer, B)).toEqual({ model: 'up-model', prompt: 'p' });
    const json = await soraTask.buildSubmit(
      channel,
      'generate',
      { ...body, group: 'vip', extra: 1 },
      { upstreamModel: 'up-model' },
    );
    expect(JSON.parse(json.body as string)).toEqual({ model: 'up-model', prompt: 'p', seconds: '4', size: '720x1280' });
    const remix = await soraTask.buildSubmit(channel, 'remix', { prompt: 'again' }, { origin: 'video_1' });
    expect(remix).toMatchObject({ url: 'http://up.test/v1/videos/video_1/remix', body: '{"prompt":"again"}' });
  });
});
