// OpenAI's video create (`POST /v1/videos`: JSON, or the SDK's multipart form with an `input_reference` file) read
// for routing by its model, as new-api routes it to a channel of any video platform. A Sora (or OpenAI) channel gets
// the client's bytes unchanged; any other platform gets the request converted into new-api's generic video submit
// ({model, prompt, seconds, size, image, metadata}: what its adaptor checks on `/v1/video/generations`), the
// reference image as its URL or data URI, a file part as a data URI. The conversion is made only for such a channel:
// a form's file is never copied for Sora.
import { RelayError } from '../errors.js';
import { boundaryOf, formFilePart, formFields } from '../multipart.js';
import { SORA_DEFAULT_MODEL } from '../providers/sora/adaptor.js';

export interface VideoCreateRequest {
  /** the model it names; new-api's default (sora-2) when it names none */
  model: string;
  /** the seconds and size the client asked for, as it wrote them */
  seconds: unknown;
  size: unknown;
  /** the request in new-api's generic video shape, for a platform other than Sora */
  generic(): Record<string, unknown>;
}

/** generic fields a JSON create may already carry in new-api's shape: passed on for the platform to check */
const GENERIC_FIELDS = ['prompt', 'seconds', 'duration', 'size', 'mode', 'image', 'images', 'metadata'];

const invalid = (message: string) => new RelayError(400, message, 'new_api_error', 'invalid_request');

/** a reference the platforms take as an image: an http(s) URL or a data URI */
const isImageRef = (v: unknown): v is string => typeof v === 'string' && /^(https?:\/\/|data:)/i.test(v.trim());

function referenceImage(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (!isImageRef(v)) throw invalid('input_reference 必须是图片 URL、data URI 或文件');
  return v.trim();
}

/** A form's metadata field is JSON text; anything else is passed on as it is, for the platform to refuse. */
function metadataOf(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

function modelOf(v: unknown): string {
  if (v === undefined || v === null || v === '') return SORA_DEFAULT_MODEL;
  if (typeof v !== 'string') throw invalid('model 必须是字符串');
  return v;
}

function fromForm(bytes: Buffer, boundary: string): VideoCreateRequest {
  let fields: ReturnType<typeof formFields>;
  try {
    fields = formFields(bytes, boundary);
  } catch {
    throw invalid('无效的 multipart 请求体');
  }
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined);
  const model = modelOf(text('model'));
  return {
    model,
    seconds: text('seconds'),
    size: text('size'),
    generic() {
      const out: Record<string, unknown> = { model };
      for (const name of GENERIC_FIELDS) {
        const v = text(name);
        if (v !== undefined) out[name] = name === 'metadata' ? metadataOf(v) : v;
      }
      const ref = fields.input_reference;
      if (typeof ref === 'string') out.image = referenceImage(ref);
      else if (ref) {
        const file = formFilePart(bytes, boundary, 'input_reference')!;
        const type = file.type && /^[\w.+-]+\/[\w.+-]+$/.test(file.type) ? file.type : 'application/octet-stream';
        out.image = `data:${type};base64,${file.bytes.toString('base64')}`;
      }
      return out;
    },
  };
}

function fromJson(bytes: Buffer): VideoCreateRequest {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    body = undefined;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('无效的请求体');
  const b = body as Record<string, unknown>;
  const model = modelOf(b.model);
  return {
    model,
    seconds: b.seconds,
    size: b.size,
    generic() {
      const out: Record<string, unknown> = { model };
      for (const name of GENERIC_FIELDS) if (b[name] !== undefined) out[name] = b[name];
      const image = referenceImage(b.input_reference);
      if (image !== undefined) out.image = image;
      return out;
    },
  };
}

/** Reads a create's model and fields; a body that is neither a JSON object nor a readable form is refused (400). */
export function readVideoCreate(bytes: Buffer, contentType: string): VideoCreateRequest {
  const boundary = boundaryOf(contentType);
  return boundary ? fromForm(bytes, boundary) : fromJson(bytes);
}
