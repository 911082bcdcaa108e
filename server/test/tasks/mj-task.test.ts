// midjourney-proxy's task JSON → midjourneys columns → the client's JSON (new-api's MidjourneyDto, with the forwarded
// image URL), the poller's row update (timeout, failure, compare-and-set), and the notify callback's verification
// and idempotent application.
import { describe, expect, it } from 'vitest';
import {
  applyMjNotify,
  mjNotifyHookUrl,
  mjNotifySignature,
  mjRowToClient,
  mjTaskRowFields,
  planMjPollBatch,
  planMjPollUpdate,
  readMjTask,
  readMjTaskList,
  verifyMjNotify,
  MJ_TIMEOUT_REASON,
  type MjNotifyTask,
  type MjRow,
} from '../../src/relay/providers/midjourney/index.js';

const proxyTask = {
  id: '1712',
  action: 'IMAGINE',
  prompt: '一只猫',
  promptEn: 'a cat',
  description: '/imagine 一只猫',
  state: 'st',
  submitTime: 1_000,
  startTime: 2_000,
  finishTime: 3_000,
  imageUrl: 'https://cdn.example/1712.png',
  videoUrl: 'https://cdn.example/1712.mp4',
  videoUrls: [{ url: 'https://cdn.example/a.mp4' }, { url: '' }, 'junk'],
  status: 'SUCCESS',
  progress: '100%',
  failReason: '',
  buttons: [{ customId: 'MJ::JOB::upsample::1::h', emoji: '', label: 'U1', type: 2, style: 2 }],
  properties: { finalPrompt: 'a cat', finalZhPrompt: '一只猫', discordInstanceId: '9' },
  extra: 'ignored',
};

describe('task JSON → row → client JSON', () => {
  it('reads a task and its columns', () => {
    const t = readMjTask(proxyTask)!;
    expect(t.videoUrls).toEqual([{ url: 'https://cdn.example/a.mp4' }]);
    expect(mjTaskRowFields(t)).toEqual({
      code: 1,
      progress: '100%',
      prompt_en: 'a cat',
      state: 'st',
      submit_time: 1_000,
      start_time: 2_000,
      finish_time: 3_000,
      image_url: 'https://cdn.example/1712.png',
      video_url: 'https://cdn.example/1712.mp4',
      video_urls: '[{"url":"https://cdn.example/a.mp4"}]',
      status: 'SUCCESS',
      fail_reason: '',
      buttons: JSON.stringify(proxyTask.buttons),
      properties: JSON.stringify(proxyTask.properties),
    });
  });

  it('leaves buttons and properties alone when the upstream sends none, and tolerates wrong types', () => {
    const t = readMjTask({ id: 'x', progress: 5, submitTime: '1', buttons: null, properties: [] })!;
    const fields = mjTaskRowFields(t);
    expect(fields).toMatchObject({ progress: '', video_urls: '' });
    expect(['buttons', 'properties', 'submit_time', 'start_time', 'finish_time'].filter((k) => k in fields)).toEqual(
      [],
    );
    expect(readMjTask({ status: 'SUCCESS' })).toBeNull();
    expect(readMjTask(null)).toBeNull();
    expect(readMjTaskList({ ids: [] })).toBeNull();
    expect(readMjTaskList([null, { id: 'a' }, 7])!.map((x) => x.id)).toEqual(['a']);
  });

  const row = (over: Partial<MjRow> = {}): MjRow => {
    const f = mjTaskRowFields(readMjTask(proxyTask)!);
    return {
      mj_id: '1712',
      action: 'IMAGINE',
      prompt: '一只猫',
      description: '/imagine 一只猫',
      ...f,
      submit_time: f.submit_time!,
      start_time: f.start_time!,
      finish_time: f.finish_time!,
      buttons: f.buttons!,
      properties: f.properties!,
      ...over,
    };
  };
  const opts = { forwardUrl: true, serverAddress: 'https://gw.example/', rand: () => '42' };

  it("answers new-api's MidjourneyDto, the image forwarded through /mj/image/{id}", () => {
    expect(mjRowToClient(row(), opts)).toEqual({
      id: '1712',
      action: 'IMAGINE',
      customId: '',
      botType: '',
      prompt: '一只猫',
      promptEn: 'a cat',
      description: '/imagine 一只猫',
      state: 'st',
      submitTime: 1_000,
      startTime: 2_000,
      finishTime: 3_000,
      imageUrl: 'https://gw.example/mj/image/1712',
      videoUrl: 'https://cdn.example/1712.mp4',
      videoUrls: [{ url: 'https://cdn.example/a.mp4' }],
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      buttons: proxyTask.buttons,
      maskBase64: '',
      properties: { finalPrompt: 'a cat', finalZhPrompt: '一只猫' },
    });
  });

  it('adds ?rand= while unfinished, keeps the upstream URL when forwarding is off, and no URL stays empty', () => {
    expect(mjRowToClient(row({ status: 'IN_PROGRESS' }), opts).imageUrl).toBe(
      'https://gw.example/mj/image/1712?rand=42',
    );
    expect(mjRowToClient(row(), { ...opts, forwardUrl: false }).imageUrl).toBe('https://cdn.example/1712.png');
    const empty = mjRowToClient(row({ image_url: '', video_urls: '', buttons: '', properties: 'not json' }), opts);
    expect(empty).toMatchObject({ imageUrl: '', videoUrls: null, buttons: null, properties: null });
  });
});

describe('the poller’s update of a row', () => {
  const running = { mj_id: '1712', status: 'IN_PROGRESS', progress: '50%', submit_time: 10_000, quota: 50_000 };
  const state = (over: object) => readMjTask({ ...proxyTask, ...over })!;

  it('success: the fields, at 100%, compare-and-set on the status it read', () => {
    const u = planMjPollUpdate(running, state({}), 20_000)!;
    expect(u).toMatchObject({
      expectStatus: 'IN_PROGRESS',
      refund: false,
      set: { status: 'SUCCESS', progress: '100%' },
    });
  });

  it('progress: the fields, no refund', () => {
    const u = planMjPollUpdate(running, state({ status: 'IN_PROGRESS', progress: '70%' }), 20_000)!;
    expect(u).toMatchObject({ refund: false, set: { status: 'IN_PROGRESS', progress: '70%' } });
  });

  it('failure (status or a fail reason): FAILURE at 100% with the reason, refunded when charged', () => {
    const f = planMjPollUpdate(running, state({ status: 'FAILURE', failReason: 'banned', progress: '' }), 20_000)!;
    expect(f).toMatchObject({
      expectStatus: 'IN_PROGRESS',
      refund: true,
      set: { status: 'FAILURE', progress: '100%', fail_reason: 'banned', finish_time: 20_000 },
    });
    const reason = planMjPollUpdate(running, state({ status: 'IN_PROGRESS', failReason: 'gone' }), 20_000)!;
    expect(reason).toMatchObject({ refund: true, set: { status: 'FAILURE', fail_reason: 'gone' } });
    const free = planMjPollUpdate({ ...running, quota: 0 }, state({ status: 'FAILURE' }), 20_000)!;
    expect(free.refund).toBe(false);
  });

  it('timeout after 1 h, listed or not: FAILURE with the reason, the status made consistent', () => {
    const late = 10_000 + 3_600_001;
    const listed = planMjPollUpdate(running, state({ status: 'IN_PROGRESS', progress: '60%' }), late)!;
    expect(listed).toMatchObject({
      refund: true,
      set: { status: 'FAILURE', progress: '100%', fail_reason: MJ_TIMEOUT_REASON },
    });
    expect(planMjPollUpdate(running, undefined, late)).toEqual({
      set: { status: 'FAILURE', progress: '100%', fail_reason: MJ_TIMEOUT_REASON, finish_time: late },
      expectStatus: 'IN_PROGRESS',
      refund: true,
    });
    expect(planMjPollUpdate(running, undefined, 10_000 + 3_600_000)).toBeNull();
  });

  it('a row without the upstream id fails at once (refunded if it was charged)', () => {
    expect(planMjPollUpdate({ ...running, mj_id: '' }, undefined, 20_000)).toEqual({
      set: { status: 'FAILURE', progress: '100%', fail_reason: '', finish_time: 20_000 },
      expectStatus: 'IN_PROGRESS',
      refund: true,
    });
  });

  it('a batch pairs rows with items by id, ignores a stray item and leaves quiet rows out', () => {
    const rows = [
      { ...running, id: 1, mj_id: 'a' },
      { ...running, id: 2, mj_id: 'b' },
      { ...running, id: 3, mj_id: 'c', status: 'SUCCESS' },
    ];
    const plans = planMjPollBatch(
      rows,
      [
        state({ id: 'b', status: 'FAILURE', failReason: 'x' }),
        state({ id: 'zzz' }),
        state({ id: 'c', status: 'FAILURE' }),
      ],
      20_000,
    );
    expect(plans.map((p) => [p.row.id, p.update.set.status, p.update.refund])).toEqual([[2, 'FAILURE', true]]);
  });

  it('a terminal row never changes again', () => {
    for (const status of ['SUCCESS', 'FAILURE']) {
      expect(planMjPollUpdate({ ...running, status }, state({ status: 'FAILURE' }), 99_999_999)).toBeNull();
    }
  });
});

describe('the notify callback', () => {
  const SECRET = 'server-secret';
  const task: MjNotifyTask = {
    id: 5,
    mj_id: '1712',
    channel_id: 3,
    status: 'IN_PROGRESS',
    progress: '40%',
    submit_time: 0,
    quota: 50_000,
  };
  const find = async (mjId: string) => (mjId === task.mj_id ? task : null);
  const sig = mjNotifySignature(SECRET, 3);

  it('gives the upstream a signed hook of the gateway', () => {
    expect(mjNotifyHookUrl('https://gw.example/', 3, SECRET)).toBe(`https://gw.example/mj/notify?channel=3&sig=${sig}`);
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(mjNotifySignature(SECRET, 4)).not.toBe(sig);
    expect(mjNotifySignature('other', 3)).not.toBe(sig);
  });

  it('accepts a signed callback for a task of that channel', async () => {
    const v = await verifyMjNotify({ channel: '3', sig }, proxyTask, SECRET, find);
    expect(v).toMatchObject({ ok: true, task, state: { id: '1712', status: 'SUCCESS' } });
  });

  it('refuses a missing or wrong signature, an unset secret, a bad body, an unknown task, another channel’s', async () => {
    const refused = (status: number, description: string) => ({ ok: false, status, body: { code: 4, description } });
    expect(await verifyMjNotify({}, proxyTask, SECRET, find)).toEqual(refused(401, 'invalid_notify_signature'));
    expect(await verifyMjNotify({ channel: '3', sig: sig.replace(/.$/, 'x') }, proxyTask, SECRET, find)).toEqual(
      refused(401, 'invalid_notify_signature'),
    );
    expect(await verifyMjNotify({ channel: '3', sig: 'short' }, proxyTask, SECRET, find)).toEqual(
      refused(401, 'invalid_notify_signature'),
    );
    expect(await verifyMjNotify({ channel: '03', sig }, proxyTask, SECRET, find)).toEqual(
      refused(401, 'invalid_notify_signature'),
    );
    expect(await verifyMjNotify({ channel: '3', sig: mjNotifySignature('', 3) }, proxyTask, '', find)).toEqual(
      refused(401, 'invalid_notify_signature'),
    );
    expect(await verifyMjNotify({ channel: '3', sig }, [proxyTask], SECRET, find)).toEqual(
      refused(400, 'bind_request_body_failed'),
    );
    expect(await verifyMjNotify({ channel: '3', sig }, { ...proxyTask, id: '9' }, SECRET, find)).toEqual(
      refused(404, 'midjourney_task_not_found'),
    );
    // a valid signature of channel 4 does not open channel 3's tasks
    const sig4 = mjNotifySignature(SECRET, 4);
    expect(await verifyMjNotify({ channel: '4', sig: sig4 }, proxyTask, SECRET, find)).toEqual(
      refused(404, 'midjourney_task_not_found'),
    );
  });

  it('applies once: a repeat after the terminal write, a late or out-of-order callback change nothing', () => {
    const s = (over: object) => readMjTask({ ...proxyTask, ...over })!;
    const fail = applyMjNotify(task, s({ status: 'FAILURE', failReason: 'banned', progress: '' }), 7)!;
    expect(fail).toMatchObject({
      expectStatus: 'IN_PROGRESS',
      refund: true,
      set: { status: 'FAILURE', progress: '100%' },
    });
    // once the row holds FAILURE, the same callback again changes nothing (and so cannot refund twice)
    const after = { ...task, status: 'FAILURE', progress: '100%' };
    expect(applyMjNotify(after, s({ status: 'FAILURE', failReason: 'banned' }), 8)).toBeNull();
    expect(
      applyMjNotify({ ...task, status: 'SUCCESS', progress: '100%' }, s({ status: 'IN_PROGRESS', progress: '90%' }), 8),
    ).toBeNull();
    // an older progress than stored is ignored; a newer one is written
    expect(applyMjNotify(task, s({ status: 'IN_PROGRESS', progress: '20%' }), 8)).toBeNull();
    expect(applyMjNotify(task, s({ status: 'IN_PROGRESS', progress: '60%' }), 8)).toMatchObject({
      refund: false,
      set: { progress: '60%' },
    });
    // a callback never times a task out, however old
    expect(applyMjNotify(task, s({ status: 'IN_PROGRESS', progress: '60%' }), 10 ** 12)?.set.status).toBe(
      'IN_PROGRESS',
    );
  });
});
