// The upstream body of the native lanes (the provider speaks the client's format): the client's raw bytes unless
// something must change (model mapping, stream_options, the provider's conversion, param_override), and a form's
// model field for multipart requests.
import { GONE, refusedRequest, type AttemptResult } from '../attempt-result.js';
import { FormatError } from '../formats/codec.js';
import { boundaryOf, replaceFormField } from '../multipart.js';
import type { LaneAttempt } from './lane.js';

const INCLUDE_USAGE = Buffer.from('"stream_options":{"include_usage":true},');

/** Inserts `"stream_options":{"include_usage":true},` right after the opening brace of a non-empty JSON object. */
function spliceIncludeUsage(raw: Buffer): Buffer {
  const i = raw.indexOf(0x7b);
  return Buffer.concat([raw.subarray(0, i + 1), INCLUDE_USAGE, raw.subarray(i + 1)]);
}

export function nativeBody(l: LaneAttempt): Buffer | AttemptResult | Promise<Buffer | AttemptResult> {
  const { a, info, adaptor } = l;
  const { body, mode } = a;
  if (a.passThrough) return a.raw;
  if (mode.multipart) {
    const boundary = boundaryOf(l.req.headers['content-type'])!;
    if (adaptor.convertForm) {
      // a vendor that takes the upload in its own shape (Cloudflare's /ai/run: the audio bytes alone)
      try {
        const rebuilt = adaptor.convertForm(info, a.raw, boundary);
        if (rebuilt) return rebuilt;
      } catch (e) {
        if (!(e instanceof FormatError)) throw e;
        return refusedRequest(e);
      }
    }
    // forwarded unchanged; only a mapped model is written into the form's model field
    return info.upstreamModel !== a.model ? replaceFormField(a.raw, boundary, 'model', info.upstreamModel) : a.raw;
  }
  const copy: Record<string, any> = { ...body };
  let changed = false;
  // the common streaming case only adds stream_options: splice it into the raw bytes instead of re-serialising
  let spliceUsage = false;
  if (copy.model !== info.upstreamModel) {
    copy.model = info.upstreamModel;
    changed = true;
  }
  if (a.isStream && !mode.eventStream && adaptor.supportsStreamOptions(info)) {
    if (l.ctx.config.forceStreamOption && !a.clientWantsUsage) {
      if (body.stream_options === undefined) spliceUsage = true;
      else {
        copy.stream_options = {
          ...(typeof body.stream_options === 'object' && body.stream_options ? body.stream_options : {}),
          include_usage: true,
        };
        changed = true;
      }
    }
  } else if (copy.stream_options !== undefined) {
    delete copy.stream_options;
    changed = true;
  }
  let converted: boolean | Promise<boolean>;
  try {
    converted = adaptor.convertRequest(info, copy);
  } catch (e) {
    // a body the vendor's format cannot carry (images or tools to a text-only vendor): a 400, nothing sent
    if (!(e instanceof FormatError)) throw e;
    return refusedRequest(e);
  }
  if (converted === true) changed = true;
  else if (converted !== false) return afterConversion(l, copy, converted, changed, spliceUsage);
  return finish(l, copy, changed, spliceUsage);
}

/** The provider's conversion waited (remote images): its refusal is a 400, and a client gone meanwhile is not sent. */
async function afterConversion(
  l: LaneAttempt,
  copy: Record<string, any>,
  converted: Promise<boolean>,
  changed: boolean,
  spliceUsage: boolean,
): Promise<Buffer | AttemptResult> {
  try {
    if (await converted) changed = true;
  } catch (e) {
    if (!(e instanceof FormatError)) throw e;
    return refusedRequest(e);
  }
  if (l.res.destroyed) return GONE;
  return finish(l, copy, changed, spliceUsage);
}

function finish(l: LaneAttempt, copy: Record<string, any>, changed: boolean, spliceUsage: boolean): Buffer {
  const override = l.a.channel.paramOverride;
  if (override) {
    Object.assign(copy, override);
    changed = true;
  }
  if (!changed) return spliceUsage ? spliceIncludeUsage(l.a.raw) : l.a.raw;
  if (spliceUsage) copy.stream_options = { include_usage: true };
  return Buffer.from(JSON.stringify(copy));
}
