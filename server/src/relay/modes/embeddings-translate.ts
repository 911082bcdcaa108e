// Embeddings across formats (the translated lane of the embeddings modes, relay/attempt.ts): an OpenAI client's
// /v1/embeddings on a Gemini channel goes to Gemini's :batchEmbedContents, and a Gemini client's :embedContent /
// :batchEmbedContents on an OpenAI-compatible channel goes to /v1/embeddings. The conversions are the Gemini codec's
// (formats/gemini/embeddings.ts); this module adds what the lane needs around them: usage and OpenAI's base64 vectors.
import {
  batchEmbedResponseToOpenAI,
  batchEmbedToOpenAI,
  embedContentToOpenAI,
  openAIEmbeddingToBatchEmbed,
  openAIEmbeddingToGemini,
} from '../formats/gemini/embeddings.js';
import { normaliseUsage } from '../usage.js';
import type { ModeTranslation } from './mode.js';

/** A vector as OpenAI's `encoding_format: "base64"` sends it: little-endian float32s, base64-encoded. */
export function base64Vector(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

/** Gemini reports no token usage for embeddings: the OpenAI answer carries the relay's own count of the input. */
export const openAIEmbeddingsOnGemini: ModeTranslation = {
  request: (body, upstreamModel) => openAIEmbeddingToBatchEmbed(body, upstreamModel),
  response(upstream, ctx) {
    const body = batchEmbedResponseToOpenAI(upstream, ctx.model, ctx.promptTokens()) as {
      data: { embedding: number[] | string }[];
    };
    // the official OpenAI clients ask for base64 by default and decode it themselves
    if (ctx.request.encoding_format === 'base64')
      for (const d of body.data) d.embedding = base64Vector(d.embedding as number[]);
    return { body, usage: null };
  },
};

/** The OpenAI upstream's usage is kept for billing; Gemini's embedding answers have no usage field to carry it. */
function geminiEmbedOnOpenAI(batch: boolean): ModeTranslation {
  return {
    request: (body, upstreamModel) => ({
      ...(batch ? batchEmbedToOpenAI(body, upstreamModel) : embedContentToOpenAI(body, upstreamModel)),
    }),
    response: (upstream) => ({
      body: openAIEmbeddingToGemini(upstream, batch),
      usage: normaliseUsage(upstream?.usage),
    }),
  };
}

export const geminiEmbedContentOnOpenAI = geminiEmbedOnOpenAI(false);
export const geminiBatchEmbedOnOpenAI = geminiEmbedOnOpenAI(true);
