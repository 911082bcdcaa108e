// midjourney-proxy's submit codes read into the gateway's decision (charge, disable, the client's answer, the row),
// and the local errors' answers (400, or 429 for code 30).
import { describe, expect, it } from 'vitest';
import {
  mjErrorAnswer,
  readMjSubmitAnswer,
  MJ_SATURATED_MESSAGE,
  type MjSubmitContext,
} from '../../src/relay/providers/midjourney/index.js';

const NOW = 1_765_000_000_000;
const ctx = (over: Partial<MjSubmitContext> = {}): MjSubmitContext => ({
  action: 'IMAGINE',
  chargeable: true,
  autoDisable: true,
  now: NOW,
  ...over,
});
const answer = (body: object) => JSON.stringify(body);

describe('Midjourney submit answers', () => {
  it('1: charged, passed through, a row at 0%', () => {
    const text = answer({ code: 1, description: '提交成功', result: '1712', properties: {} });
    const d = readMjSubmitAnswer(200, text, ctx());
    expect(d).toEqual({
      charge: true,
      disableChannel: false,
      clientStatus: 200,
      clientBody: text,
      upstreamTaskId: '1712',
      code: 1,
      row: {
        code: 1,
        mj_id: '1712',
        description: '提交成功',
        fail_reason: '',
        status: '',
        progress: '0%',
        image_url: '',
        submit_time: NOW,
        start_time: 0,
        finish_time: 0,
      },
    });
  });

  it('1 on a non-200 answer: not charged (new-api charges only an HTTP 200)', () => {
    const d = readMjSubmitAnswer(500, answer({ code: 1, result: '1712' }), ctx());
    expect(d).toMatchObject({ charge: false, clientStatus: 500, upstreamTaskId: '1712' });
  });

  it('21 with a finished task: charged, stored finished with its image, rewritten to 1', () => {
    const body = {
      code: 21,
      description: '任务已存在',
      result: '1712',
      properties: { status: 'SUCCESS', imageUrl: 'https://cdn/x.png' },
    };
    const d = readMjSubmitAnswer(200, answer(body), ctx({ action: 'UPSCALE' }));
    expect(d.charge).toBe(true);
    expect(JSON.parse(d.clientBody)).toEqual({ ...body, code: 1 });
    expect(d.row).toMatchObject({
      code: 21,
      mj_id: '1712',
      status: 'SUCCESS',
      image_url: 'https://cdn/x.png',
      progress: '100%',
      start_time: NOW,
      finish_time: NOW,
    });
  });

  it('21 still running: charged, stored at its status, rewritten to 1', () => {
    const body = { code: 21, result: '1712', properties: { status: 'IN_PROGRESS', imageUrl: '' } };
    const d = readMjSubmitAnswer(200, answer(body), ctx());
    expect(d).toMatchObject({ charge: true, row: { status: 'IN_PROGRESS', progress: '0%', finish_time: 0 } });
    expect(JSON.parse(d.clientBody).code).toBe(1);
  });

  it('21 for INPAINT or CUSTOM_ZOOM: the code is kept and nothing is charged', () => {
    for (const action of ['INPAINT', 'CUSTOM_ZOOM'] as const) {
      const text = answer({ code: 21, result: '1712', properties: {} });
      const d = readMjSubmitAnswer(200, text, ctx({ action, chargeable: false }));
      expect(d).toMatchObject({ charge: false, clientBody: text, code: 21 });
    }
  });

  it('22: charged and rewritten to 1', () => {
    const body = {
      code: 22,
      description: '排队中，前面还有1个任务',
      result: '1712',
      properties: { numberOfQueues: 1 },
    };
    const d = readMjSubmitAnswer(200, answer(body), ctx());
    expect(d).toMatchObject({ charge: true, upstreamTaskId: '1712', row: { code: 22, status: '', progress: '0%' } });
    expect(JSON.parse(d.clientBody)).toEqual({ ...body, code: 1 });
  });

  it('23, 24, 4 and other codes: not charged, stored failed with the description, passed through', () => {
    for (const [code, description] of [
      [23, '队列已满，请稍后尝试'],
      [24, '可能包含敏感词'],
      [4, 'prompt不能为空'],
      [9, '提交失败'],
    ] as const) {
      const text = answer({ code, description, result: code === 23 ? '1712' : null, properties: {} });
      const d = readMjSubmitAnswer(200, text, ctx());
      expect(d, String(code)).toMatchObject({
        charge: false,
        disableChannel: false,
        clientStatus: 200,
        clientBody: text,
        code,
        row: { fail_reason: description, status: 'FAILURE', progress: '100%', finish_time: NOW },
      });
    }
  });

  it('3: not charged; the channel is disabled only when automatic disabling is on', () => {
    const text = answer({ code: 3, description: '无可用的账号实例', result: null });
    expect(readMjSubmitAnswer(200, text, ctx())).toMatchObject({ charge: false, disableChannel: true });
    expect(readMjSubmitAnswer(200, text, ctx({ autoDisable: false }))).toMatchObject({
      charge: false,
      disableChannel: false,
    });
  });

  it('an accepted code without a task id: not charged (nothing could follow or refund it), stored failed', () => {
    for (const body of [
      { code: 1, description: '提交成功' },
      { code: 22, result: '' },
      { code: 21, result: null, properties: { status: 'SUCCESS', imageUrl: 'https://cdn/x.png' } },
    ]) {
      const d = readMjSubmitAnswer(200, answer(body), ctx());
      expect(d, JSON.stringify(body)).toMatchObject({
        charge: false,
        upstreamTaskId: '',
        clientBody: answer(body),
        row: { status: 'FAILURE', progress: '100%', image_url: '' },
      });
    }
  });

  it('an upload: its result is a list of URLs; stored finished and charged', () => {
    const text = answer({ code: 1, description: '提交成功', result: ['https://cdn/a.png'] });
    const d = readMjSubmitAnswer(200, text, ctx({ action: 'UPLOAD' }));
    expect(d).toMatchObject({
      charge: true,
      upstreamTaskId: '',
      clientBody: text,
      row: { status: 'SUCCESS', progress: '100%', finish_time: NOW },
    });
  });

  it('an answer that is not JSON: no row, not charged, a local code-5 error', () => {
    for (const [text, description] of [
      ['', 'empty_response_body'],
      ['<html>bad gateway</html>', 'unmarshal_response_body_failed'],
      ['[1,2]', 'unmarshal_response_body_failed'],
    ]) {
      const d = readMjSubmitAnswer(502, text, ctx());
      expect(d).toEqual({
        charge: false,
        disableChannel: false,
        clientStatus: 400,
        clientBody: JSON.stringify({ description: `${description} `, type: 'upstream_error', code: 5 }),
        upstreamTaskId: '',
        code: 0,
        row: null,
      });
    }
  });
});

describe('Midjourney local errors', () => {
  it('answer 400 with "<description> <result>"', () => {
    expect(mjErrorAnswer({ code: 4, description: 'task_not_found' })).toEqual({
      status: 400,
      body: { description: 'task_not_found ', type: 'upstream_error', code: 4 },
    });
  });

  it('answer 429 with new-api message for code 30', () => {
    expect(mjErrorAnswer({ code: 30, description: 'rate limited' })).toEqual({
      status: 429,
      body: { description: `rate limited ${MJ_SATURATED_MESSAGE}`, type: 'upstream_error', code: 30 },
    });
  });
});
