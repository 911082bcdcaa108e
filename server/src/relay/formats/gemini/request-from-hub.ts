// Hub request → the generateContent body a Gemini (or Vertex AI Gemini) upstream expects. The model goes in the
// URL, so opts.model is not written into the body.
import type { RequestOptions } from '../codec.js';
import type { HubContentPart, HubFunctionTool, HubMessage, HubRequest, HubToolChoice } from '../../hub/types.js';
import { toGeminiParameters } from './schema.js';
import { parseArgs } from './response.js';
import { placeSignatures, requiresCallSignatures, signFirstCall } from './thinking.js';
import { compact, isPlainObject, type GeminiContent, type GeminiPart, type HubImagePartWithMime } from './wire.js';

/** reasoning_effort → thinkingBudget; 512 for minimal is the smallest budget every 2.5 model accepts (Flash-Lite's
 * floor). */
const EFFORT_BUDGETS: Record<string, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576 };

export function requestFromHub(hub: HubRequest, opts: RequestOptions): Record<string, unknown> {
  const signCalls = requiresCallSignatures(opts.model);
  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  for (const message of hub.messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        systemParts.push(...textParts(message.content));
        break;
      case 'user':
        appendTurn(contents, 'user', userParts(message.content));
        break;
      case 'assistant':
        appendTurn(contents, 'model', modelParts(message, callNames, signCalls));
        break;
      case 'tool':
        appendTurn(contents, 'user', [functionResponsePart(message, callNames)]);
        break;
    }
  }
  return compact({
    contents,
    systemInstruction: systemParts.length > 0 ? { parts: systemParts } : undefined,
    tools: hub.tools?.length ? [{ functionDeclarations: hub.tools.map(functionDeclaration) }] : undefined,
    toolConfig: hub.tool_choice !== undefined ? toolConfig(hub.tool_choice) : undefined,
    generationConfig: generationConfig(hub),
  });
}

/** Gemini wants user and model turns to alternate: a turn of the same role as the last one joins it. */
function appendTurn(contents: GeminiContent[], role: 'user' | 'model', parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function contentText(content: HubMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** Gemini refuses empty text parts, so they are left out. */
function textParts(content: HubMessage['content']): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  return (content ?? [])
    .filter((p) => p.type === 'text' && p.text)
    .map((p) => ({ text: (p as { text: string }).text }));
}

function userParts(content: HubMessage['content']): GeminiPart[] {
  if (typeof content === 'string' || content === null) return textParts(content);
  return content.map(contentPart).filter((p): p is GeminiPart => p !== null);
}

function contentPart(part: HubContentPart): GeminiPart | null {
  if (part.type === 'text') return part.text ? { text: part.text } : null;
  const url = part.image_url.url;
  const data = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  if (data) return { inlineData: { mimeType: data[1], data: data[2] } };
  // A remote URL goes as fileData; Gemini fetches only some URIs itself (its Files API, gs://, YouTube, and public
  // http(s) on recent models), so a provider that must inline remote images does it before calling this codec.
  const known = (part as HubImagePartWithMime).image_url.mime_type;
  return { fileData: { mimeType: known || guessMimeType(url), fileUri: url } };
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

export function guessMimeType(url: string): string {
  const path = url.split(/[?#]/)[0];
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  // the part is an image_url, so an unknown extension is most likely a JPEG
  return (ext && MIME_BY_EXTENSION[ext]) || 'image/jpeg';
}

/**
 * Thought text is not sent back (Gemini does not need it; only the signatures carry its state), and call ids are
 * not either: Gemini matches responses to calls by name and order, and an id it did not issue is at best ignored.
 * For Gemini 3, calls whose signature the client could not keep get Google's stand-in (thinking.ts).
 */
function modelParts(message: HubMessage, callNames: Map<string, string>, signCalls: boolean): GeminiPart[] {
  const parts = textParts(message.content);
  for (const call of message.tool_calls ?? []) {
    callNames.set(call.id, call.function.name);
    parts.push({ functionCall: { name: call.function.name, args: parseArgs(call.function.arguments) } });
  }
  const signatures = (message.thinking_blocks ?? [])
    .map((b) => b.signature)
    .filter((s): s is string => typeof s === 'string' && s !== '');
  const placed = placeSignatures(parts, signatures);
  return signCalls ? signFirstCall(placed) : placed;
}

function functionResponsePart(message: HubMessage, callNames: Map<string, string>): GeminiPart {
  const text = contentText(message.content);
  let response: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    response = isPlainObject(parsed) ? parsed : { content: text };
  } catch {
    response = { content: text };
  }
  const name = (message.tool_call_id && callNames.get(message.tool_call_id)) || message.name || 'function';
  return { functionResponse: { name, response } };
}

function functionDeclaration(tool: HubFunctionTool): Record<string, unknown> {
  const { name, description, parameters } = tool.function;
  return compact({ name, description, parameters: toGeminiParameters(parameters) });
}

function toolConfig(choice: HubToolChoice): Record<string, unknown> {
  if (typeof choice === 'object')
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  const mode = choice === 'none' ? 'NONE' : choice === 'required' ? 'ANY' : 'AUTO';
  return { functionCallingConfig: { mode } };
}

function generationConfig(hub: HubRequest): Record<string, unknown> | undefined {
  const config = compact({
    temperature: hub.temperature,
    topP: hub.top_p,
    topK: hub.top_k,
    maxOutputTokens: hub.max_completion_tokens ?? hub.max_tokens,
    stopSequences: hub.stop === undefined ? undefined : typeof hub.stop === 'string' ? [hub.stop] : hub.stop,
    candidateCount: hub.n,
    seed: hub.seed,
    presencePenalty: hub.presence_penalty,
    frequencyPenalty: hub.frequency_penalty,
    responseMimeType: undefined as string | undefined,
    responseJsonSchema: undefined as Record<string, unknown> | undefined,
    thinkingConfig: thinkingConfig(hub),
  });
  const format = hub.response_format;
  if (format?.type === 'json_object' || format?.type === 'json_schema') config.responseMimeType = 'application/json';
  // responseJsonSchema takes standard JSON Schema, so the schema needs no translation into Gemini's Schema subset
  if (format?.type === 'json_schema' && format.json_schema.schema)
    config.responseJsonSchema = format.json_schema.schema;
  return Object.keys(config).length > 0 ? config : undefined;
}

function thinkingConfig(hub: HubRequest): Record<string, unknown> | undefined {
  const budget =
    hub.thinking_budget ?? (hub.reasoning_effort !== undefined ? EFFORT_BUDGETS[hub.reasoning_effort] : undefined);
  if (budget === undefined) return undefined;
  // a zero budget turns thinking off: there is nothing to include
  return budget === 0 ? { thinkingBudget: 0 } : { thinkingBudget: budget, includeThoughts: true };
}
