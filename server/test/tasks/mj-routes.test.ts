// Midjourney's route table, the submit validation (new-api's error descriptions), simple-change and Plus customIds,
// the action → model name and prices, and the follow-up's origin check.
import { describe, expect, it } from 'vitest';
import {
  MJ_ACTIONS,
  MJ_DEFAULT_PRICES,
  mjModelName,
  mjOriginCheck,
  parseMjRoute,
  parsePlusCustomId,
  parseSimpleChange,
  readMjListIds,
  readMjRequest,
  validateMjSubmit,
  type MjSubmitPlan,
} from '../../src/relay/providers/midjourney/index.js';
import { DEFAULT_MODEL_PRICE } from '../../src/services/pricing/defaults.js';

const SUBMITS = [
  'imagine',
  'change',
  'simple-change',
  'describe',
  'blend',
  'action',
  'modal',
  'shorten',
  'upload-discord-images',
  'video',
  'edits',
] as const;

describe('Midjourney routes', () => {
  for (const prefix of ['', '/mj-fast', '/mj-relax', '/mj-turbo']) {
    const mode = prefix ? prefix.slice(4) : null;
    it(`reads every route under ${prefix || 'no prefix'}`, () => {
      for (const name of SUBMITS) {
        expect(parseMjRoute('POST', `${prefix}/mj/submit/${name}`)).toEqual({
          ok: true,
          route: { kind: 'submit', submit: name, mode, upstreamPath: `/mj/submit/${name}` },
        });
      }
      expect(parseMjRoute('POST', `${prefix}/mj/insight-face/swap`)).toEqual({
        ok: true,
        route: { kind: 'submit', submit: 'swap', mode, upstreamPath: '/mj/insight-face/swap' },
      });
      expect(parseMjRoute('GET', `${prefix}/mj/task/1712345/fetch`)).toEqual({
        ok: true,
        route: { kind: 'fetch', taskId: '1712345', mode },
      });
      expect(parseMjRoute('POST', `${prefix}/mj/task/list-by-condition`)).toEqual({
        ok: true,
        route: { kind: 'list', mode },
      });
      expect(parseMjRoute('GET', `${prefix}/mj/task/1712345/image-seed`)).toEqual({
        ok: true,
        route: { kind: 'image-seed', taskId: '1712345', mode, upstreamPath: '/mj/task/1712345/image-seed' },
      });
      expect(parseMjRoute('GET', `${prefix}/mj/image/1712345`)).toEqual({
        ok: true,
        route: { kind: 'image', taskId: '1712345', mode },
      });
      expect(parseMjRoute('POST', `${prefix}/mj/notify?channel=3&sig=ab`)).toEqual({
        ok: true,
        route: { kind: 'notify', mode },
      });
    });
  }

  it('ignores a query string and a trailing slash', () => {
    const r = parseMjRoute('post', '/mj/submit/imagine/?x=1');
    expect(r).toMatchObject({ ok: true, route: { kind: 'submit', submit: 'imagine' } });
  });

  it('refuses unknown paths, unknown modes and bad ids', () => {
    for (const path of [
      '/mj',
      '/mj/',
      '/mj/submit/paint',
      '/mj/submit/swap',
      '/mj/submit',
      '/mj/submit/IMAGINE',
      '/fast/mj/submit/imagine', // new-api forwards this unchanged; midjourney-proxy has no such path
      '/mj-slow/mj/submit/imagine',
      '/mj-fast/submit/imagine',
      '/mj/task/a.b/fetch',
      '/mj/task//fetch',
      '/mj/task/1/2/fetch',
      '/mj/task/1/seed',
      '/mj/image/../x',
      '/mj/image/',
      '/mjx/submit/imagine',
      '/v1/mj/submit/imagine',
      '/mj/insight-face/other',
    ]) {
      expect(parseMjRoute('POST', path), path).toEqual({ ok: false, reason: 'not_found' });
      expect(parseMjRoute('GET', path), path).toEqual({ ok: false, reason: 'not_found' });
    }
  });

  it('refuses the wrong method', () => {
    expect(parseMjRoute('GET', '/mj/submit/imagine')).toEqual({ ok: false, reason: 'method_not_allowed' });
    expect(parseMjRoute('GET', '/mj/task/list-by-condition')).toEqual({ ok: false, reason: 'method_not_allowed' });
    expect(parseMjRoute('POST', '/mj/task/1/fetch')).toEqual({ ok: false, reason: 'method_not_allowed' });
    expect(parseMjRoute('POST', '/mj/image/1')).toEqual({ ok: false, reason: 'method_not_allowed' });
    expect(parseMjRoute('DELETE', '/mj/insight-face/swap')).toEqual({ ok: false, reason: 'method_not_allowed' });
  });
});

describe('Midjourney model names and prices', () => {
  it('names each action as new-api and prices every one', () => {
    expect(MJ_ACTIONS.map(mjModelName)).toEqual([
      'mj_imagine',
      'mj_describe',
      'mj_blend',
      'mj_upscale',
      'mj_variation',
      'mj_reroll',
      'mj_inpaint',
      'mj_modal',
      'mj_zoom',
      'mj_custom_zoom',
      'mj_shorten',
      'mj_high_variation',
      'mj_low_variation',
      'mj_pan',
      'swap_face',
      'mj_upload',
      'mj_video',
      'mj_edits',
    ]);
    for (const a of MJ_ACTIONS) expect(MJ_DEFAULT_PRICES[mjModelName(a)], a).toBeTypeOf('number');
    expect(MJ_DEFAULT_PRICES).toMatchObject({ mj_video: 0.8, mj_edits: 0.1, mj_inpaint: 0, mj_upscale: 0.05 });
    // the shared pricing defaults carry the same prices
    for (const [model, price] of Object.entries(MJ_DEFAULT_PRICES))
      expect(DEFAULT_MODEL_PRICE[model], model).toBe(price);
  });
});

describe('simple-change and Plus customIds', () => {
  it('reads U1–U4, V1–V4 and R, in any case', () => {
    expect(parseSimpleChange('1712345 U2')).toEqual({ taskId: '1712345', action: 'UPSCALE', index: 2 });
    expect(parseSimpleChange(' 1712345   v4 ')).toEqual({ taskId: '1712345', action: 'VARIATION', index: 4 });
    expect(parseSimpleChange('1712345 r')).toEqual({ taskId: '1712345', action: 'REROLL', index: null });
    // new-api reads "U12" as U1 and crashes on "1712345 " (an empty second word)
    for (const bad of ['1712345 U12', '1712345 U5', '1712345 U0', '1712345 X1', '1712345', '1712345 U1 x', '', ' ']) {
      expect(parseSimpleChange(bad), bad).toBeNull();
    }
  });

  it('reads the Plus buttons into plain actions', () => {
    expect(parsePlusCustomId('MJ::JOB::upsample::2::abc')).toEqual({ action: 'UPSCALE', index: 2 });
    expect(parsePlusCustomId('MJ::JOB::upsample_v6_2x_subtle::1::abc::SOLO')).toEqual({ action: 'UPSCALE', index: 1 });
    expect(parsePlusCustomId('MJ::JOB::variation::3::abc')).toEqual({ action: 'VARIATION', index: 3 });
    expect(parsePlusCustomId('MJ::JOB::low_variation::1::abc::SOLO')).toEqual({ action: 'LOW_VARIATION', index: 1 });
    expect(parsePlusCustomId('MJ::JOB::high_variation::1::abc::SOLO')).toEqual({ action: 'HIGH_VARIATION', index: 1 });
    expect(parsePlusCustomId('MJ::JOB::pan_left::1::abc::SOLO')).toEqual({ action: 'PAN', index: 1 });
    expect(parsePlusCustomId('MJ::JOB::reroll::0::abc::SOLO')).toEqual({ action: 'REROLL', index: 1 });
    expect(parsePlusCustomId('MJ::Outpaint::50::1::abc::SOLO')).toEqual({ action: 'ZOOM', index: 1 });
    expect(parsePlusCustomId('MJ::CustomZoom::abc')).toEqual({ action: 'CUSTOM_ZOOM', index: 1 });
    expect(parsePlusCustomId('MJ::Inpaint::1::abc::SOLO')).toEqual({ action: 'INPAINT', index: 1 });
    expect(parsePlusCustomId('MJ::JOB::upsample::x::abc')).toEqual({ code: 4, description: 'index_parse_failed' });
    expect(parsePlusCustomId('MJ::JOB::upsample')).toEqual({ code: 4, description: 'index_parse_failed' });
    expect(parsePlusCustomId('MJ::JOB::strong_variation::1::a')).toEqual({
      code: 4,
      description: 'unknown_action:MJ::JOB::strong_variation::1::a',
    });
    // new-api panics on an id without "::"
    expect(parsePlusCustomId('nonsense')).toEqual({ code: 4, description: 'unknown_action' });
    expect(parsePlusCustomId('MJ::JOB')).toEqual({ code: 4, description: 'unknown_action' });
  });
});

const err = (description: string) => ({ ok: false, error: { code: 4, description } });

describe('Midjourney submit validation', () => {
  it('names the action, model, charge and origin of every submit', () => {
    const cases: [Parameters<typeof validateMjSubmit>[0], object, Partial<MjSubmitPlan>][] = [
      [
        'imagine',
        { prompt: 'a cat' },
        { action: 'IMAGINE', modelName: 'mj_imagine', originTaskId: null, prompt: 'a cat' },
      ],
      ['describe', { base64: 'data:image/png;base64,AA' }, { action: 'DESCRIBE', modelName: 'mj_describe' }],
      ['blend', { base64Array: ['a', 'b'] }, { action: 'BLEND', modelName: 'mj_blend' }],
      ['shorten', { prompt: 'long' }, { action: 'SHORTEN', modelName: 'mj_shorten' }],
      ['upload-discord-images', { base64Array: ['a'] }, { action: 'UPLOAD', modelName: 'mj_upload' }],
      ['edits', { prompt: 'x', image: 'y' }, { action: 'EDITS', modelName: 'mj_edits' }],
      ['video', { prompt: 'x', image: 'y' }, { action: 'VIDEO', modelName: 'mj_video', originTaskId: null }],
      ['video', { taskId: '17', index: 1 }, { action: 'VIDEO', modelName: 'mj_video', originTaskId: '17' }],
      [
        'swap',
        { sourceBase64: 'a', targetBase64: 'b' },
        { action: 'SWAP_FACE', modelName: 'swap_face', prompt: 'InsightFace' },
      ],
      [
        'change',
        { taskId: '17', action: 'UPSCALE', index: 2 },
        { action: 'UPSCALE', modelName: 'mj_upscale', originTaskId: '17', index: 2 },
      ],
      ['change', { taskId: '17', action: 'VARIATION', index: 4 }, { action: 'VARIATION', index: 4 }],
      ['change', { taskId: '17', action: 'REROLL' }, { action: 'REROLL', modelName: 'mj_reroll', index: null }],
      [
        'simple-change',
        { content: '17 V3' },
        { action: 'VARIATION', modelName: 'mj_variation', originTaskId: '17', index: 3 },
      ],
      [
        'simple-change',
        { content: '17 U1' },
        { action: 'UPSCALE', modelName: 'mj_upscale', originTaskId: '17', index: 1 },
      ],
      [
        'action',
        { taskId: '17', customId: 'MJ::JOB::pan_up::1::h::SOLO' },
        { action: 'PAN', modelName: 'mj_pan', originTaskId: '17' },
      ],
      [
        'modal',
        { taskId: '17', prompt: 'more' },
        { action: 'MODAL', modelName: 'mj_modal', originTaskId: '17', charge: true },
      ],
    ];
    for (const [route, body, want] of cases) {
      const v = validateMjSubmit(route, body);
      expect(v.ok, `${route} ${JSON.stringify(body)}`).toBe(true);
      if (v.ok) expect(v.plan, route).toMatchObject({ charge: true, ...want, body });
    }
  });

  it('never charges INPAINT and CUSTOM_ZOOM (their modal is charged)', () => {
    for (const customId of ['MJ::Inpaint::1::h::SOLO', 'MJ::CustomZoom::h']) {
      const v = validateMjSubmit('action', { taskId: '17', customId });
      expect(v).toMatchObject({ ok: true, plan: { charge: false } });
    }
  });

  it("refuses with new-api's descriptions", () => {
    expect(validateMjSubmit('imagine', null)).toEqual(err('bind_request_body_failed'));
    expect(validateMjSubmit('imagine', [])).toEqual(err('bind_request_body_failed'));
    expect(validateMjSubmit('imagine', 'x')).toEqual(err('bind_request_body_failed'));
    expect(validateMjSubmit('imagine', {})).toEqual(err('prompt_is_required'));
    expect(validateMjSubmit('imagine', { prompt: 3 })).toEqual(err('prompt_is_required'));
    expect(validateMjSubmit('swap', { sourceBase64: 'a' })).toEqual(err('sour_base64_and_target_base64_is_required'));
    expect(validateMjSubmit('change', { action: 'UPSCALE', index: 1 })).toEqual(err('task_id_is_required'));
    expect(validateMjSubmit('change', { taskId: '1', index: 1 })).toEqual(err('action_is_required'));
    expect(validateMjSubmit('change', { taskId: '1', action: 'UPSCALE' })).toEqual(err('index_is_required'));
    expect(validateMjSubmit('change', { taskId: '1', action: 'UPSCALE', index: 0 })).toEqual(err('index_is_required'));
    expect(validateMjSubmit('change', { taskId: '1', action: 'UPSCALE', index: 5 })).toEqual(err('index_parse_failed'));
    expect(validateMjSubmit('change', { taskId: '1', action: 'UPSCALE', index: '2' })).toEqual(
      err('index_parse_failed'),
    );
    // new-api lets these through priced as their own model; INPAINT through change would even be free
    expect(validateMjSubmit('change', { taskId: '1', action: 'INPAINT', index: 1 })).toEqual(err('unknown_action'));
    expect(validateMjSubmit('change', { taskId: '1', action: 'upscale', index: 1 })).toEqual(err('unknown_action'));
    expect(validateMjSubmit('simple-change', {})).toEqual(err('content_is_required'));
    expect(validateMjSubmit('simple-change', { content: '17 U9' })).toEqual(err('content_parse_failed'));
    expect(validateMjSubmit('action', { taskId: '1' })).toEqual(err('custom_id_is_required'));
    expect(validateMjSubmit('action', { customId: 'MJ::JOB::upsample::1::h' })).toEqual(err('task_id_is_required'));
    expect(validateMjSubmit('action', { taskId: '1', customId: 'MJ::JOB::upsample::q::h' })).toEqual(
      err('index_parse_failed'),
    );
    expect(validateMjSubmit('modal', { prompt: 'x' })).toEqual(err('task_id_is_required'));
  });
});

describe('a follow-up and its origin task', () => {
  const plan = (route: 'change' | 'modal', body: object) => {
    const v = validateMjSubmit(route, body);
    if (!v.ok) throw new Error('invalid');
    return v.plan;
  };
  const upscale = plan('change', { taskId: '17', action: 'UPSCALE', index: 1 });
  const modal = plan('modal', { taskId: '17' });
  const origin = { status: 'SUCCESS', prompt: 'a cat', channelId: 9, channelStatus: 1 };

  it('pins to the origin channel and copies its prompt', () => {
    expect(mjOriginCheck(upscale, origin, true)).toEqual({ ok: true, channelId: 9, prompt: 'a cat' });
  });

  it('refuses a missing task, an unfinished one (but for a modal) and a disabled or deleted channel', () => {
    expect(mjOriginCheck(upscale, null, true)).toEqual(err('task_not_found'));
    const running = { ...origin, status: 'IN_PROGRESS' };
    expect(mjOriginCheck(upscale, running, true)).toEqual(err('task_status_not_success'));
    expect(mjOriginCheck(upscale, running, false)).toMatchObject({ ok: true, channelId: 9 });
    expect(mjOriginCheck(modal, { ...origin, status: 'MODAL' }, true)).toMatchObject({ ok: true });
    expect(mjOriginCheck(upscale, { ...origin, channelStatus: 2 }, true)).toEqual(err('该任务所属渠道已被禁用'));
    expect(mjOriginCheck(upscale, { ...origin, channelStatus: null }, true)).toEqual(err('get_channel_info_failed'));
  });
});

describe('readMjRequest: route and plan in one call', () => {
  it('gives a submit its plan, another route none, and the answers for the rest', () => {
    expect(readMjRequest('POST', '/mj-turbo/mj/submit/simple-change', { content: '17 U3' })).toMatchObject({
      ok: true,
      route: { kind: 'submit', submit: 'simple-change', mode: 'turbo', upstreamPath: '/mj/submit/simple-change' },
      plan: { action: 'UPSCALE', modelName: 'mj_upscale', originTaskId: '17', index: 3 },
    });
    expect(readMjRequest('GET', '/mj/task/17/fetch', undefined)).toEqual({
      ok: true,
      route: { kind: 'fetch', taskId: '17', mode: null },
      plan: null,
    });
    expect(readMjRequest('POST', '/mj/submit/imagine', { prompt: '' })).toEqual({
      ok: false,
      reason: 'invalid',
      answer: { status: 400, body: { description: 'prompt_is_required ', type: 'upstream_error', code: 4 } },
    });
    expect(readMjRequest('POST', '/mj/submit/nope', {})).toEqual({ ok: false, reason: 'not_found' });
    expect(readMjRequest('GET', '/mj/submit/imagine', undefined)).toEqual({ ok: false, reason: 'method_not_allowed' });
  });
});

describe('readMjListIds', () => {
  it('reads the ids of list-by-condition, refusing what new-api cannot bind', () => {
    expect(readMjListIds({ ids: ['1', '2', '1', ''] })).toEqual(['1', '2']);
    expect(readMjListIds({})).toEqual([]);
    expect(readMjListIds({ ids: null })).toEqual([]);
    expect(readMjListIds({ ids: ['1', '2', '3'] }, 2)).toEqual(['1', '2']);
    const fail = { status: 400, body: { description: 'do_request_failed ', type: 'upstream_error', code: 4 } };
    expect(readMjListIds({ ids: [1] })).toEqual(fail);
    expect(readMjListIds({ ids: '1' })).toEqual(fail);
    expect(readMjListIds(null)).toEqual(fail);
    expect(readMjListIds([])).toEqual(fail);
  });
});
