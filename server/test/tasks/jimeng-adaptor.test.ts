// Jimeng's adaptor without a server: the checks of a generic submit (images as URLs or base64, 5 or 10 seconds as
// frames, the aspect ratio, metadata that cannot set the req_key), Jimeng 3.0's req_key by images, the upstream id
// that keeps the req_key, the states read from GetResult (unknown, 429 and rate codes never a success), and the
// request signed by Volcengine's own Signer (X-Date, X-Content-Sha256 of the exact body, the cv/cn-north-1 scope).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkJimengSubmit,
  readJimengFetch,
  resolveReqKey,
  splitUpstreamId,
} from '../../src/relay/providers/jimeng/adaptor.js';
import { jimengRequest } from '../../src/relay/providers/jimeng/index.js';

const channel = (key: string) => ({ type: 51, key, baseUrl: 'https://visual.test/', other: '', organization: '' });

describe('jimeng adaptor', () => {
  it('checks a generic submit before anything is sent', () => {
    expect(checkJimengSubmit({ model: 'm', prompt: 'p', seconds: '10', size: '720x1280' })).toEqual({
      ok: true,
      action: 'textGenerate',
      model: 'm',
      body: { req_key: 'm', prompt: 'p', seed: -1, frames: 241, aspect_ratio: '9:16' },
    });
    const two = checkJimengSubmit({ model: 'm', images: ['aGVsbG8=', 'd29ybGQ='] });
    expect(two).toMatchObject({
      ok: true,
      action: 'firstTailGenerate',
      body: { binary_data_base64: ['aGVsbG8=', 'd29ybGQ='] },
    });
    expect(two.ok && 'aspect_ratio' in two.body).toBe(false);
    for (const bad of [
      { model: 'm' },
      { model: 'm', prompt: 'p', duration: 7 },
      { model: 'm', prompt: 'p', images: ['a', 'b', 'c'] },
      { model: 'm', prompt: 'p', metadata: { aspect_ratio: '2:1' } },
      { model: 'm', prompt: 'p', metadata: { frames: 100 } },
      { model: 'm', prompt: 'p', metadata: { seed: 1.5 } },
      { model: 7, prompt: 'p' },
    ])
      expect(checkJimengSubmit(bad).ok, JSON.stringify(bad)).toBe(false);
  });

  it("resolves Jimeng 3.0's req_key by the number of images, other keys as they are", () => {
    expect(resolveReqKey('jimeng_v30', 0)).toBe('jimeng_t2v_v30');
    expect(resolveReqKey('jimeng_v30_1080p', 0)).toBe('jimeng_t2v_v30_1080p');
    expect(resolveReqKey('jimeng_v30_1080p', 1)).toBe('jimeng_i2v_first_v30_1080');
    expect(resolveReqKey('jimeng_v30', 2)).toBe('jimeng_i2v_first_tail_v30');
    expect(resolveReqKey('jimeng_v30_pro', 1)).toBe('jimeng_ti2v_v30_pro');
    expect(resolveReqKey('jimeng_vgfm_t2v_l20', 1)).toBe('jimeng_vgfm_t2v_l20');
    expect(splitUpstreamId('jimeng_t2v_v30:123')).toEqual({ reqKey: 'jimeng_t2v_v30', taskId: '123' });
    expect(splitUpstreamId('123')).toEqual({ reqKey: 'jimeng_vgfm_t2v_l20', taskId: '123' });
  });

  it('reads GetResult: unknown statuses, 429s and rate codes are never a success', () => {
    const ok = (data: unknown) => ({ code: 10000, data, message: 'Success' });
    expect(readJimengFetch(200, ok({ status: 'in_queue' }), 'k:1')?.[0].status).toBe('QUEUED');
    expect(readJimengFetch(200, ok({ status: 'generating' }), 'k:1')?.[0].status).toBe('IN_PROGRESS');
    expect(readJimengFetch(200, ok({ status: 'done', video_url: 'u' }), 'k:1')?.[0]).toMatchObject({
      status: 'SUCCESS',
      data: { video_url: 'u' },
    });
    expect(readJimengFetch(200, ok({ status: 'done', video_url: '' }), 'k:1')?.[0]).toMatchObject({
      status: 'FAILURE',
      failReason: 'no video generated',
    });
    expect(readJimengFetch(200, ok({ status: 'not_found' }), 'k:1')?.[0].failReason).toBe('not_found');
    expect(readJimengFetch(200, ok({ status: 'mystery', video_url: 'u' }), 'k:1')).toBeNull();
    expect(readJimengFetch(429, ok({ status: 'done', video_url: 'u' }), 'k:1')).toBeNull();
    expect(readJimengFetch(200, { code: 50430, message: 'limit' }, 'k:1')).toBeNull();
    expect(readJimengFetch(200, { code: 50411, message: 'risk' }, 'k:1')?.[0]).toMatchObject({
      status: 'FAILURE',
      failReason: 'risk',
    });
  });

  it("signs with Volcengine's Signer, or sends another new-api's token as a Bearer", async () => {
    const body = JSON.stringify({ req_key: 'k', task_id: '1' });
    const signed = await jimengRequest(
      channel('AK | SK'),
      'CVSync2AsyncGetResult',
      body,
      new Date('2026-12-07T08:00:00Z'),
    );
    expect(signed.url).toBe('https://visual.test/?Action=CVSync2AsyncGetResult&Version=2022-08-31');
    expect(signed.headers['X-Date']).toBe('20261207T080000Z');
    expect(signed.headers['X-Content-Sha256']).toBe(createHash('sha256').update(body).digest('hex'));
    expect(signed.headers.Authorization).toMatch(
      /^HMAC-SHA256 Credential=AK\/20261207\/cn-north-1\/cv\/request, SignedHeaders=x-content-sha256;x-date, Signature=[0-9a-f]{64}$/,
    );
    const relayed = await jimengRequest(channel('sk-other'), 'CVSync2AsyncSubmitTask', body);
    expect(relayed.url).toBe('https://visual.test/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31');
    expect(relayed.headers.authorization).toBe('Bearer sk-other');
  });
});
