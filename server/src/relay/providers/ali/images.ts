// OpenAI's image generation on DashScope, two ways by model (new-api's list of synchronous models, matched as part
// of the upstream model's name: SYNC_IMAGE_MODELS):
//   asynchronous (wanx…): POST {base}/api/v1/services/aigc/text2image/image-synthesis with `X-DashScope-Async: enable`
//       request  {model, prompt, n, size, negative_prompt?, parameters?, input?}
//             →  {model, input: {prompt, negative_prompt?}, parameters: {size: W*H, n, …}}
//       receipt  {output: {task_id, task_status: PENDING}, request_id}
//       then GET {base}/api/v1/tasks/{task_id} until task_status is SUCCEEDED (output.results: [{url, actual_prompt}]),
//       FAILED, CANCELED or UNKNOWN (output.code, output.message), or ALI_IMAGE_WAIT.timeoutMs has passed
//   synchronous (qwen-image, z-image, wan2.6, wan2.7): POST {base}/api/v1/services/aigc/multimodal-generation/generation
//       request  → {model, input: {messages: [{role: user, content: [{text: prompt}]}]}, parameters: {size, n, …}}
//       answer   {output: {choices: [{message: {content: [{image: url}]}}]}, usage: {image_count}, request_id}
// Both answer OpenAI's {created, data: [{url, revised_prompt?} | {b64_json}]}; b64_json images are fetched here through
// the relay's SSRF-guarded image fetch (FollowUpIo.fetchImage). The price is the images mode's, per image requested
// (relay/modes/images.ts), charged only once this resolved with the images.
import { splitBase } from '../openai/index.js';
import {
  ClientLeft,
  type AwaitedAnswer,
  type EndpointEntry,
  type FollowUpIo,
  type ProviderError,
  type RelayInfo,
} from '../types.js';

export const ALI_IMAGE_SYNTHESIS_PATH = '/api/v1/services/aigc/text2image/image-synthesis';
export const ALI_MULTIMODAL_GENERATION_PATH = '/api/v1/services/aigc/multimodal-generation/generation';
export const ALI_TASKS_PATH = '/api/v1/tasks/';

/** new-api's default `qwen.sync_image_models`: models DashScope serves synchronously */
const SYNC_IMAGE_MODELS = ['z-image', 'qwen-image', 'wan2.6', 'wan2.7'];

/**
 * How long an asynchronous task is waited for. A wanx image takes 5–30 s in DashScope's queue: asking every 2 s adds
 * at most 2 s to the answer for some ten cheap task reads per image. Three minutes bound the wait (new-api gives up
 * after about 3.5): the client holds its connection and the reservation stands meanwhile; a busier queue than that is
 * answered with a 504, and nothing is charged. Tests shorten these (the test server runs in their process).
 */
export const ALI_IMAGE_WAIT = { intervalMs: 2000, timeoutMs: 180_000 };

const isSync = (model: string) => SYNC_IMAGE_MODELS.some((m) => model.includes(m));

function aliError(code: unknown, message: unknown): ProviderError {
  const text = typeof message === 'string' && message ? message : `DashScope task ${String(code ?? 'failed')}`;
  return { message: text, type: 'ali_error', code: typeof code === 'string' && code ? code : null, param: null };
}

/** the vendor's code says the request itself is at fault (its content, its parameters): no other channel would do */
const REQUEST_FAULT = /^(InvalidParameter|DataInspectionFailed|IPInfringementSuspect|BadRequest)/;

function failed(code: unknown, message: unknown): AwaitedAnswer {
  const own = typeof code === 'string' && REQUEST_FAULT.test(code);
  return { ok: false, status: own ? 400 : 500, error: aliError(code, message), final: own };
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

interface Image {
  url: string;
  revised?: string;
}

/** OpenAI's data list: the URLs as they are, or each image fetched and inlined for `b64_json`. */
async function openaiImages(images: Image[], io: FollowUpIo, asked: number): Promise<AwaitedAnswer> {
  if (!images.length) return failed('NoImage', 'DashScope answered without an image');
  const b64 = io.request.response_format === 'b64_json';
  const data: Record<string, string>[] = [];
  for (const image of images) {
    const item: Record<string, string> = {};
    if (!b64) item.url = image.url;
    else {
      try {
        item.b64_json = (await io.fetchImage(image.url)).data;
      } catch (err) {
        if (err instanceof ClientLeft) throw err;
        // DashScope drew and bills the image: another channel would draw it again, so none is tried
        const error = aliError('image_fetch_failed', (err as Error).message);
        return { ok: false, status: 502, error, final: true };
      }
    }
    if (image.revised) item.revised_prompt = image.revised;
    data.push(item);
  }
  const body = Buffer.from(JSON.stringify({ created: Math.floor(Date.now() / 1000), data }));
  // part of a task may fail (its results then hold code and message): only the images given are charged
  return data.length < asked ? { ok: true, body, images: data.length } : { ok: true, body };
}

/** the images asked for, counted as the images mode counts them for the price (relay/modes/images.ts) */
function imagesAsked(v: unknown): number {
  const n = Number(v);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

function taskImages(output: Record<string, unknown>): Image[] {
  const results = Array.isArray(output.results) ? output.results : [];
  const images: Image[] = [];
  for (const r of results) {
    const o = obj(r);
    // a result of a partly failed task carries code and message instead of a url
    if (typeof o?.url === 'string' && o.url) {
      const revised = typeof o.actual_prompt === 'string' && o.actual_prompt ? o.actual_prompt : undefined;
      images.push({ url: o.url, revised });
    }
  }
  return images;
}

function syncImages(j: Record<string, unknown>): Image[] {
  const choices = obj(j.output)?.choices;
  const images: Image[] = [];
  for (const c of Array.isArray(choices) ? choices : []) {
    const content = obj(obj(c)?.message)?.content;
    for (const part of Array.isArray(content) ? content : []) {
      const image = obj(part)?.image;
      if (typeof image === 'string' && image) images.push({ url: image });
    }
  }
  return images;
}

function parse(buf: Buffer): Record<string, unknown> {
  const j = obj(JSON.parse(buf.toString('utf8')));
  if (!j) throw new Error('invalid DashScope answer: not an object');
  return j;
}

/**
 * One read of the task; null when it could not be made (a connection lost, a timeout): like a read DashScope refused
 * for a reason other than the key, or one that is not its JSON, that is no verdict on the task, which is asked again
 * until the deadline rather than drawn anew on another channel.
 */
async function readTask(
  io: FollowUpIo,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Buffer } | null> {
  try {
    return await io.get(path, headers);
  } catch (err) {
    if (err instanceof ClientLeft) throw err;
    return null;
  }
}

async function pollTask(info: RelayInfo, taskId: string, io: FollowUpIo): Promise<AwaitedAnswer> {
  const { prefix } = splitBase(info.channel.baseUrl);
  const path = `${prefix}${ALI_TASKS_PATH}${encodeURIComponent(taskId)}`;
  const headers = { authorization: `Bearer ${info.channel.key}`, accept: 'application/json' };
  const deadline = Date.now() + ALI_IMAGE_WAIT.timeoutMs;
  for (;;) {
    await io.wait(Math.max(0, Math.min(ALI_IMAGE_WAIT.intervalMs, deadline - Date.now())));
    const r = await readTask(io, path, headers);
    if (r && r.status === 200) {
      const output = obj(obj(safeJson(r.body))?.output) ?? {};
      const status = output.task_status;
      if (status === 'SUCCEEDED') return openaiImages(taskImages(output), io, imagesAsked(io.request.n));
      if (status === 'FAILED' || status === 'CANCELED' || status === 'UNKNOWN')
        return failed(output.code ?? status, output.message);
    } else if (r && (r.status === 401 || r.status === 403)) {
      const j = obj(safeJson(r.body));
      return { ok: false, status: r.status, error: aliError(j?.code, j?.message) };
    }
    if (Date.now() >= deadline) {
      const message = `DashScope task ${taskId} did not finish within ${ALI_IMAGE_WAIT.timeoutMs / 1000} s`;
      return { ok: false, status: 504, error: aliError('task_timeout', message), final: true };
    }
  }
}

function safeJson(buf: Buffer): unknown {
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
}

export const aliImages: EndpointEntry = {
  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    const path = isSync(info.upstreamModel) ? ALI_MULTIMODAL_GENERATION_PATH : ALI_IMAGE_SYNTHESIS_PATH;
    return { origin, path: prefix + path };
  },
  headers(info) {
    const h: Record<string, string> = { authorization: `Bearer ${info.channel.key}` };
    // the image-synthesis service refuses a synchronous call (403 AccessDenied)
    if (!isSync(info.upstreamModel)) h['X-DashScope-Async'] = 'enable';
    const plugin = info.channel.other.trim();
    if (plugin) h['X-DashScope-Plugin'] = plugin;
    return h;
  },
  convertRequest(info, body) {
    const prompt = String(body.prompt ?? '');
    // the client's own DashScope `parameters` and `input` (as new-api lets through), under the OpenAI fields
    const parameters: Record<string, unknown> = { ...obj(body.parameters) };
    if (typeof body.size === 'string' && body.size) parameters.size = body.size.replace('x', '*');
    // the number billed is the number asked for (relay/modes/images.ts counts n the same way)
    parameters.n = imagesAsked(body.n);
    if (typeof body.watermark === 'boolean') parameters.watermark = body.watermark;
    let input: Record<string, unknown>;
    if (isSync(info.upstreamModel)) {
      input = obj(body.input) ?? { messages: [{ role: 'user', content: [{ text: prompt }] }] };
      if (typeof body.negative_prompt === 'string') parameters.negative_prompt = body.negative_prompt;
    } else {
      input = { prompt, ...obj(body.input) };
      if (typeof body.negative_prompt === 'string') input.negative_prompt = body.negative_prompt;
    }
    // response_format is the relay's to honour (awaitAnswer): the vendor always answers with URLs
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, { model: info.upstreamModel, input, parameters });
    return true;
  },
  async awaitAnswer(info, receipt, io) {
    const j = parse(receipt);
    // an error DashScope put in a 200 answer
    if (typeof j.code === 'string' && j.code) return failed(j.code, j.message);
    if (isSync(info.upstreamModel)) return openaiImages(syncImages(j), io, imagesAsked(io.request.n));
    const taskId = obj(j.output)?.task_id;
    if (typeof taskId !== 'string' || !taskId) throw new Error('invalid DashScope task answer: no task_id');
    return pollTask(info, taskId, io);
  },
};
