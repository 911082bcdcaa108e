// The upstream requests built for midjourney-proxy, sent to the strict mock: the channel's secret and never the
// client's Authorization, /mj paths with the mode prefix stripped (or kept when asked), the drawing options'
// filtering, and whole submits read back through readMjSubmitAnswer; the poller's list and the images.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildMjFetchRequest,
  buildMjImageSeedRequest,
  buildMjListRequest,
  buildMjSubmitRequest,
  parseMjRoute,
  readMjSubmitAnswer,
  readMjTask,
  readMjTaskList,
  validateMjSubmit,
  type MjRoute,
  type MjUpstreamOptions,
  type MjUpstreamRequest,
} from '../../src/relay/providers/midjourney/index.js';
import { MJ_MOCK_PNG, MjProxyMock } from '../helpers/mj-proxy-mock.js';

const SECRET = 'mj-channel-secret';
const OFF: MjUpstreamOptions = { modeClear: false, accountFilter: false, notify: false };

async function send(req: MjUpstreamRequest, extra: Record<string, string> = {}) {
  const res = await fetch(req.url, {
    method: req.method,
    headers: { ...req.headers, ...extra },
    body: req.body,
    signal: AbortSignal.timeout(req.timeoutMs),
  });
  return { status: res.status, text: await res.text() };
}

function submitRoute(path: string): Extract<MjRoute, { kind: 'submit' }> {
  const r = parseMjRoute('POST', path);
  if (!r.ok || r.route.kind !== 'submit') throw new Error(`not a submit: ${path}`);
  return r.route;
}

describe('Midjourney upstream requests against a strict midjourney-proxy', () => {
  let mock: MjProxyMock;
  let strict: MjProxyMock;
  let modePaths: MjProxyMock;
  beforeAll(async () => {
    mock = await MjProxyMock.start({ secret: SECRET });
    strict = await MjProxyMock.start({ secret: SECRET, expect: { modeClear: true } });
    modePaths = await MjProxyMock.start({ secret: SECRET, modePaths: true });
  });
  afterAll(async () => {
    await Promise.all([mock.close(), strict.close(), modePaths.close()]);
  });

  it('sends the channel key as mj-api-secret ("Bearer " dropped), no Authorization, to /mj with the mode stripped', async () => {
    const route = submitRoute('/mj-fast/mj/submit/imagine');
    const req = buildMjSubmitRequest(
      { baseUrl: `${mock.url}/`, key: `Bearer ${SECRET}` },
      route,
      { prompt: 'a cat' },
      OFF,
    );
    expect(req).toMatchObject({ method: 'POST', url: `${mock.url}/mj/submit/imagine`, timeoutMs: 60_000 });
    expect(req.headers).toEqual({
      'mj-api-secret': SECRET,
      accept: 'application/json',
      'content-type': 'application/json',
    });
    const { status, text } = await send(req);
    expect(status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ code: 1, description: '提交成功' });
    const seen = mock.requests.at(-1)!;
    expect(seen.path).toBe('/mj/submit/imagine');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.body).toEqual({ prompt: 'a cat' });
  });

  it('keeps the mode prefix only when asked, for a proxy that serves mode paths', async () => {
    const route = submitRoute('/mj-relax/mj/submit/imagine');
    const keep = buildMjSubmitRequest(
      { baseUrl: modePaths.url, key: SECRET },
      route,
      { prompt: 'x' },
      { ...OFF, keepModePrefix: true },
    );
    expect(keep.url).toBe(`${modePaths.url}/mj-relax/mj/submit/imagine`);
    expect((await send(keep)).status).toBe(200);
    // midjourney-proxy itself has no mode paths: that is why the prefix is stripped by default
    const onPlain = buildMjSubmitRequest(
      { baseUrl: mock.url, key: SECRET },
      route,
      { prompt: 'x' },
      { ...OFF, keepModePrefix: true },
    );
    expect((await send(onPlain)).status).toBe(404);
  });

  it('the mock refuses a wrong secret and any Authorization', async () => {
    const route = submitRoute('/mj/submit/imagine');
    const wrong = buildMjSubmitRequest({ baseUrl: mock.url, key: 'other' }, route, { prompt: 'x' }, OFF);
    expect((await send(wrong)).status).toBe(401);
    const right = buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, { prompt: 'x' }, OFF);
    expect((await send(right, { authorization: 'Bearer sk-client' })).status).toBe(400);
  });

  it('drops notifyHook and accountFilter unless their options are on; clears speed flags with MjModeClearEnabled', async () => {
    const route = submitRoute('/mj/submit/imagine');
    const body = {
      prompt: 'a cat --fast --ar 16:9 --relax--turbo',
      notifyHook: 'https://client/hook',
      accountFilter: { instanceId: '1' },
      state: 's',
    };
    // the strict mock expects all three cleaned; sending the body unfiltered is refused
    const raw = await fetch(`${strict.url}/mj/submit/imagine`, {
      method: 'POST',
      headers: { 'mj-api-secret': SECRET, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(raw.status).toBe(422);
    expect(strict.violations).toEqual(['notifyHook sent while MjNotifyEnabled is off']);

    const cleaned = buildMjSubmitRequest({ baseUrl: strict.url, key: SECRET }, route, body, {
      ...OFF,
      modeClear: true,
    });
    expect((await send(cleaned)).status).toBe(200);
    expect(strict.requests.at(-1)!.body).toEqual({ prompt: 'a cat  --ar 16:9 ', state: 's' });
    expect(body.notifyHook).toBe('https://client/hook'); // the caller's body is not changed

    const kept = buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, body, {
      modeClear: false,
      accountFilter: true,
      notify: true,
    });
    expect(JSON.parse(kept.body!)).toEqual(body);
    const gateway = buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, body, {
      ...OFF,
      notify: true,
      gatewayNotifyHook: 'https://gw/mj/notify?channel=3&sig=ab',
    });
    expect(JSON.parse(gateway.body!)).toEqual({
      prompt: body.prompt,
      notifyHook: 'https://gw/mj/notify?channel=3&sig=ab',
      state: 's',
    });
  });

  it('submits each scripted code through validate → build → send → read', async () => {
    const route = submitRoute('/mj/submit/imagine');
    const v = validateMjSubmit(route.submit, { prompt: 'a dog' });
    if (!v.ok) throw new Error('invalid');
    const cases = [
      [{ code: 1 }, { charge: true, disable: false, code: 1 }],
      [
        { code: 21, result: 'old-1', properties: { status: 'SUCCESS', imageUrl: 'https://cdn/old.png' } },
        { charge: true, disable: false, code: 1 },
      ],
      [{ code: 22 }, { charge: true, disable: false, code: 1 }],
      [{ code: 23 }, { charge: false, disable: false, code: 23 }],
      [{ code: 24 }, { charge: false, disable: false, code: 24 }],
      [{ code: 3 }, { charge: false, disable: true, code: 3 }],
      [
        { code: 1, httpStatus: 503 },
        { charge: false, disable: false, code: 1 },
      ],
    ] as const;
    for (const [script, want] of cases) {
      mock.scriptSubmit(script);
      const { status, text } = await send(
        buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, v.plan.body, OFF),
      );
      const d = readMjSubmitAnswer(status, text, {
        action: v.plan.action,
        chargeable: v.plan.charge,
        autoDisable: true,
        now: 1,
      });
      expect(
        { charge: d.charge, disable: d.disableChannel, code: JSON.parse(d.clientBody).code },
        JSON.stringify(script),
      ).toEqual(want);
      if (script.code === 21) expect(d.row).toMatchObject({ mj_id: 'old-1', status: 'SUCCESS', progress: '100%' });
    }
  });

  it("midjourney-proxy's own refusal (code 4, HTTP 200) is not charged", async () => {
    const route = submitRoute('/mj/submit/blend');
    const { status, text } = await send(
      buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, { base64Array: ['a'] }, OFF),
    );
    const d = readMjSubmitAnswer(status, text, { action: 'BLEND', chargeable: true, autoDisable: true, now: 1 });
    expect(d).toMatchObject({ charge: false, code: 4, row: { status: 'FAILURE', fail_reason: 'base64List参数错误' } });
  });

  it('every submit route reaches the mock and is accepted', async () => {
    mock.addTask({ id: 'origin-1', status: 'SUCCESS', progress: '100%', prompt: 'a cat' });
    const bodies: Record<string, object> = {
      '/mj/submit/imagine': { prompt: 'x' },
      '/mj/submit/change': { taskId: 'origin-1', action: 'UPSCALE', index: 1 },
      '/mj/submit/simple-change': { content: 'origin-1 V2' },
      '/mj/submit/describe': { base64: 'data:image/png;base64,AA' },
      '/mj/submit/blend': { base64Array: ['a', 'b'] },
      '/mj/submit/action': { taskId: 'origin-1', customId: 'MJ::JOB::upsample::1::h' },
      '/mj/submit/modal': { taskId: 'origin-1', prompt: 'y' },
      '/mj/submit/shorten': { prompt: 'a long prompt' },
      '/mj/submit/upload-discord-images': { base64Array: ['a', 'b'] },
      '/mj/submit/video': { taskId: 'origin-1', index: 1 },
      '/mj/submit/edits': { prompt: 'x', image: 'y' },
      '/mj/insight-face/swap': { sourceBase64: 'a', targetBase64: 'b' },
    };
    for (const [path, body] of Object.entries(bodies)) {
      const route = submitRoute(path);
      const v = validateMjSubmit(route.submit, body);
      expect(v.ok, path).toBe(true);
      if (!v.ok) continue;
      const { status, text } = await send(
        buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, v.plan.body, OFF),
      );
      const d = readMjSubmitAnswer(status, text, {
        action: v.plan.action,
        chargeable: v.plan.charge,
        autoDisable: true,
        now: 1,
      });
      expect({ path, status, code: d.code, charge: d.charge }).toEqual({ path, status: 200, code: 1, charge: true });
      expect(mock.requests.at(-1)!.path).toBe(path);
      if (path.includes('upload')) expect(d).toMatchObject({ upstreamTaskId: '', row: { status: 'SUCCESS' } });
    }
  });

  it('polls tasks with list-by-condition and fetch, reads image-seed, and serves image bytes without the secret', async () => {
    mock.scriptSubmit({ code: 1, result: 'poll-1' });
    const route = submitRoute('/mj/submit/imagine');
    await send(buildMjSubmitRequest({ baseUrl: mock.url, key: SECRET }, route, { prompt: 'a fox' }, OFF));
    mock.strayIds = ['origin-1'];
    const list = buildMjListRequest({ baseUrl: mock.url, key: SECRET }, ['poll-1', 'unknown-9']);
    expect(list).toMatchObject({ method: 'POST', url: `${mock.url}/mj/task/list-by-condition`, timeoutMs: 15_000 });
    expect(JSON.parse(list.body!)).toEqual({ ids: ['poll-1', 'unknown-9'] });
    const first = readMjTaskList(JSON.parse((await send(list)).text))!;
    // the unknown id is not answered; the stray one is, and a caller must ignore it
    expect(first.map((t) => [t.id, t.status])).toEqual([
      ['poll-1', 'NOT_START'],
      ['origin-1', 'SUCCESS'],
    ]);
    mock.strayIds = [];
    mock.advance('poll-1');
    mock.advance('poll-1');
    const running = readMjTaskList(JSON.parse((await send(list)).text))!;
    expect(running[0]).toMatchObject({ status: 'IN_PROGRESS', progress: '50%', promptEn: 'a fox' });
    mock.advance('poll-1');
    const one = await send(buildMjFetchRequest({ baseUrl: mock.url, key: SECRET }, 'poll-1'));
    const done = readMjTask(JSON.parse(one.text))!;
    expect(done).toMatchObject({ status: 'SUCCESS', progress: '100%', imageUrl: `${mock.url}/image/poll-1.png` });
    expect(done.buttons).toHaveLength(8);

    const seed = await send(buildMjImageSeedRequest({ baseUrl: mock.url, key: SECRET }, 'poll-1'));
    expect(JSON.parse(seed.text)).toEqual({ code: 1, description: '成功', result: 'seed-poll-1' });

    const img = await fetch(done.imageUrl);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await img.arrayBuffer())).toEqual(MJ_MOCK_PNG);
    expect((await fetch(done.imageUrl, { headers: { 'mj-api-secret': SECRET } })).status).toBe(400);
  });

  it('a task the test fails reads as FAILURE with its reason', async () => {
    mock.addTask({ id: 'fail-1', status: 'IN_PROGRESS', progress: '10%' });
    mock.advance('fail-1', 'banned');
    const list = await send(buildMjListRequest({ baseUrl: mock.url, key: SECRET }, ['fail-1']));
    expect(readMjTaskList(JSON.parse(list.text))).toMatchObject([
      { id: 'fail-1', status: 'FAILURE', failReason: 'banned' },
    ]);
    mock.addTask({ id: 'modal-1', action: 'INPAINT' });
    mock.update('modal-1', { status: 'MODAL', progress: '0%' });
    const modal = await send(buildMjFetchRequest({ baseUrl: mock.url, key: SECRET }, 'modal-1'));
    expect(readMjTask(JSON.parse(modal.text))).toMatchObject({ id: 'modal-1', action: 'INPAINT', status: 'MODAL' });
  });
});
