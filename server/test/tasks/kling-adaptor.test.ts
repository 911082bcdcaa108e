// Kling's adaptor alone: the JWT (HS256, typ JWT, exactly iss/exp/nbf, 1800 s and 5 s around now) verified with the
// secret and refused with another; a key without '|' sent as it is; an expired token refused by the strict mock;
// statuses mapped, with 429s, error envelopes and unknown statuses read as no answer (never a success).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { klingBearer } from '../../src/relay/providers/kling/index.js';
import { checkKlingSubmit, readKlingFetch, readKlingSubmit } from '../../src/relay/providers/kling/adaptor.js';
import { startKlingMock, type KlingMock } from './kling-mock.js';

const secret = (s: string) => new TextEncoder().encode(s);

describe('kling adaptor', () => {
  let mock: KlingMock;
  beforeAll(async () => {
    mock = await startKlingMock(['ak1|sk1']);
  });
  afterAll(async () => mock?.close());

  it('signs {iss, exp, nbf} with the secret key, HS256 with typ JWT', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await klingBearer(' ak1 | sk1 ', now);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const { payload } = await jwtVerify(jwt, secret('sk1'));
    expect(payload).toEqual({ iss: 'ak1', exp: now + 1800, nbf: now - 5 });
    await expect(jwtVerify(jwt, secret('sk2'))).rejects.toThrow();
    expect(await klingBearer('sk-plain-relay-key')).toBe('sk-plain-relay-key');
  });

  it('the strict mock refuses an expired token and a wrong signature with 401 code 1000', async () => {
    const get = async (bearer: string) => {
      const res = await fetch(`${mock.url}/v1/videos/text2video/x`, {
        headers: { authorization: `Bearer ${bearer}`, 'user-agent': 'kling-sdk/1.0' },
      });
      return [res.status, ((await res.json()) as { code: number }).code];
    };
    const now = Math.floor(Date.now() / 1000);
    expect(await get(await klingBearer('ak1|sk1', now - 3600))).toEqual([401, 1000]);
    expect(await get(await klingBearer('ak1|wrong', now))).toEqual([401, 1000]);
    // a good token reaches the route: an unknown task
    expect(await get(await klingBearer('ak1|sk1', now))).toEqual([404, 1203]);
  });

  it('reads submits and states; unknown, 429 and error envelopes are no answer', () => {
    expect(readKlingSubmit(200, { code: 0, data: { task_id: 'k1' } })).toBe('k1');
    expect(readKlingSubmit(200, { code: 1201, message: 'bad', data: { task_id: 'k1' } })).toBeNull();
    expect(readKlingSubmit(401, { code: 1000 })).toBeNull();
    const state = (task_status: string) => readKlingFetch(200, { code: 0, data: { task_id: 'k1', task_status } });
    expect(state('submitted')?.[0].status).toBe('SUBMITTED');
    expect(state('processing')?.[0].status).toBe('IN_PROGRESS');
    expect(state('succeed')?.[0].status).toBe('SUCCESS');
    expect(state('failed')?.[0]).toMatchObject({ status: 'FAILURE', failReason: 'task failed' });
    expect(state('done')).toBeNull();
    expect(readKlingFetch(429, { code: 1302 })).toBeNull();
    expect(readKlingFetch(200, { code: 5000, data: { task_id: 'k1', task_status: 'succeed' } })).toBeNull();
  });

  it('picks the action from the image and keeps the model out of metadata', () => {
    expect(checkKlingSubmit({ prompt: 'p' })).toMatchObject({ ok: true, action: 'textGenerate', model: 'kling-v1' });
    const i = checkKlingSubmit({ model: 'kling-v1-6', images: ['u'], metadata: { model: 'x', image_tail: 't' } });
    expect(i).toMatchObject({ ok: true, action: 'generate', model: 'kling-v1-6' });
    expect(i.ok && i.body).toMatchObject({ model_name: 'kling-v1-6', image: 'u', image_tail: 't', duration: '5' });
  });

  it('sends a data URI image as the bare base64 Kling takes, a URL as it is', () => {
    const d = checkKlingSubmit({
      prompt: 'p',
      image: 'data:image/png;base64,iVBORw0KGgo=',
      metadata: { image_tail: 'https://x.test/t.png' },
    });
    expect(d.ok && d.body).toMatchObject({ image: 'iVBORw0KGgo=', image_tail: 'https://x.test/t.png' });
  });
});
