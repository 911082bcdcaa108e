// Embeddings between Gemini's embedContent / batchEmbedContents and OpenAI's /v1/embeddings, both ways: a Gemini
// client on an OpenAI-compatible channel, and an OpenAI client on a Gemini channel.
import { FormatError } from '../codec.js';
import { field, isPlainObject } from './wire.js';

export interface OpenAIEmbeddingRequest {
  model: string;
  input: string | string[];
  dimensions?: number;
}

/** A Gemini content's text: Gemini embeds the parts of one content together, as one text. */
function contentText(content: unknown): string {
  const parts = field<unknown>(content, 'parts');
  if (!Array.isArray(parts)) return '';
  return parts
    .map((p) => field<unknown>(p, 'text'))
    .filter((t): t is string => typeof t === 'string')
    .join('\n');
}

function dimensions(request: unknown): number | undefined {
  const d = field<unknown>(request, 'outputDimensionality');
  return typeof d === 'number' ? d : undefined;
}

export function embedContentToOpenAI(body: Record<string, any>, model: string): OpenAIEmbeddingRequest {
  const content = field<unknown>(body, 'content');
  if (!isPlainObject(content))
    throw new FormatError('* EmbedContentRequest.content: content is not specified', 400, 'content');
  const out: OpenAIEmbeddingRequest = { model, input: contentText(content) };
  const dims = dimensions(body);
  if (dims !== undefined) out.dimensions = dims;
  return out;
}

export function batchEmbedToOpenAI(body: Record<string, any>, model: string): OpenAIEmbeddingRequest {
  const requests = field<unknown>(body, 'requests');
  if (!Array.isArray(requests) || requests.length === 0)
    throw new FormatError('* BatchEmbedContentsRequest.requests: requests is not specified', 400, 'requests');
  const out: OpenAIEmbeddingRequest = { model, input: requests.map((r) => contentText(field(r, 'content'))) };
  const dims = dimensions(requests[0]);
  if (dims !== undefined) out.dimensions = dims;
  return out;
}

/** The vectors of an OpenAI embeddings answer, in input order. */
function openAIVectors(json: any): number[][] {
  const data: unknown[] = Array.isArray(json?.data) ? json.data : [];
  return data
    .filter(isPlainObject)
    .map((d, i) => ({ index: typeof d.index === 'number' ? d.index : i, values: d.embedding }))
    .sort((a, b) => a.index - b.index)
    .map((d) => (Array.isArray(d.values) ? (d.values as number[]) : []));
}

export function openAIEmbeddingToGemini(json: any, batch: boolean): Record<string, unknown> {
  const vectors = openAIVectors(json);
  if (batch) return { embeddings: vectors.map((values) => ({ values })) };
  return { embedding: { values: vectors[0] ?? [] } };
}

export function openAIEmbeddingToBatchEmbed(body: Record<string, any>, model: string): Record<string, unknown> {
  const input: unknown = body.input;
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : [];
  if (texts.length === 0 || !texts.every((t): t is string => typeof t === 'string'))
    throw new FormatError('input must be a string or an array of strings for this model', 400, 'input');
  const dims = typeof body.dimensions === 'number' ? body.dimensions : undefined;
  return {
    requests: texts.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(dims !== undefined ? { outputDimensionality: dims } : {}),
    })),
  };
}

export function batchEmbedResponseToOpenAI(json: any, model: string, promptTokens: number): Record<string, unknown> {
  const embeddings: unknown[] = Array.isArray(json?.embeddings) ? json.embeddings : [];
  return {
    object: 'list',
    data: embeddings.map((e, index) => ({
      object: 'embedding',
      index,
      embedding: isPlainObject(e) && Array.isArray(e.values) ? e.values : [],
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
