// A Gemini client's generateContent body → hub request. The model is in the URL, not the body: the hub request's
// `model` is '' and the caller fills it.
import { FormatError } from '../codec.js';
import type {
  HubContentPart,
  HubFunctionTool,
  HubMessage,
  HubRequest,
  HubResponseFormat,
  HubToolChoice,
} from '../../hub/types.js';
import { fromGeminiSchema } from './schema.js';
import { thinkingFromParts } from './thinking.js';
import { field, isPlainObject, type GeminiPart, type HubImagePartWithMime } from './wire.js';

/**
 * Gemini's older models give calls no ids; a history then pairs a functionResponse with its call by name and order.
 * This hands out stable ids (`call_<n>`, counted over the conversation) and matches the responses to them.
 */
class CallIds {
  private next = 0;
  private pending: { id: string; name: string; answered: boolean }[] = [];

  /** the calls of a new model turn */
  startTurn(): void {
    this.pending = [];
  }

  call(name: string, id: string | undefined): string {
    const callId = id || `call_${this.next++}`;
    this.pending.push({ id: callId, name, answered: false });
    return callId;
  }

  answer(name: string, id: string | undefined): string {
    const open = this.pending.filter((c) => !c.answered);
    const match =
      (id ? open.find((c) => c.id === id) : undefined) ??
      open.find((c) => c.name === name) ??
      (id ? undefined : open[0]);
    if (match) match.answered = true;
    return id || match?.id || `call_${this.next++}`;
  }
}

export function requestToHub(body: Record<string, any>): HubRequest {
  const contents = field<unknown>(body, 'contents');
  if (!Array.isArray(contents) || contents.length === 0)
    throw new FormatError('* GenerateContentRequest.contents: contents is not specified', 400, 'contents');
  const messages: HubMessage[] = [];
  const system = systemToHub(field(body, 'systemInstruction'));
  if (system) messages.push(system);
  const ids = new CallIds();
  contents.forEach((content, i) => messages.push(...contentToHub(content, i, ids)));
  const hub: HubRequest = { model: '', messages };
  applyTools(hub, body);
  applyGenerationConfig(hub, field(body, 'generationConfig'));
  return hub;
}

/** The tools a Gemini request enables that are not functions (googleSearch, codeExecution, urlContext, …): the hub
 * cannot carry them, so a Gemini upstream lane may add them back from here. */
export function geminiNativeTools(body: Record<string, any>): Record<string, unknown>[] {
  const tools = field<unknown>(body, 'tools');
  if (!Array.isArray(tools)) return [];
  const out: Record<string, unknown>[] = [];
  for (const tool of tools) {
    if (!isPlainObject(tool)) continue;
    const rest = Object.fromEntries(
      Object.entries(tool).filter(([k]) => k !== 'functionDeclarations' && k !== 'function_declarations'),
    );
    if (Object.keys(rest).length > 0) out.push(rest);
  }
  return out;
}

function systemToHub(instruction: unknown): HubMessage | null {
  if (typeof instruction === 'string') return instruction ? { role: 'system', content: instruction } : null;
  const parts = field<unknown>(instruction, 'parts');
  if (!Array.isArray(parts)) return null;
  const texts = parts.map((p) => field<unknown>(p, 'text')).filter((t): t is string => typeof t === 'string');
  if (texts.length === 0) return null;
  return {
    role: 'system',
    content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text' as const, text })),
  };
}

function contentToHub(content: unknown, index: number, ids: CallIds): HubMessage[] {
  const role = field<string>(content, 'role') || 'user';
  const parts = field<unknown>(content, 'parts');
  if (!Array.isArray(parts) || parts.length === 0)
    throw new FormatError(`* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`);
  const typed = parts.filter(isPlainObject).map(normalizePart);
  if (role === 'model') return [modelTurnToHub(typed, ids)];
  // `function` is the role older v1beta clients gave functionResponse turns
  if (role === 'user' || role === 'function') return userTurnToHub(typed, ids);
  throw new FormatError(`Please use a valid role: user, model.`, 400, `contents[${index}].role`);
}

/** A part with its snake_case fields read into the camelCase shape. */
function normalizePart(p: Record<string, unknown>): GeminiPart {
  const part: GeminiPart = {};
  const text = field<unknown>(p, 'text');
  if (typeof text === 'string') part.text = text;
  if (field(p, 'thought') === true) part.thought = true;
  const signature = field<unknown>(p, 'thoughtSignature');
  if (typeof signature === 'string') part.thoughtSignature = signature;
  const inline = field<unknown>(p, 'inlineData');
  if (isPlainObject(inline))
    part.inlineData = { mimeType: String(field(inline, 'mimeType') ?? ''), data: String(field(inline, 'data') ?? '') };
  const file = field<unknown>(p, 'fileData');
  if (isPlainObject(file))
    part.fileData = { mimeType: field(file, 'mimeType'), fileUri: String(field(file, 'fileUri') ?? '') };
  const call = field<unknown>(p, 'functionCall');
  if (isPlainObject(call))
    part.functionCall = { id: call.id as string | undefined, name: String(call.name ?? ''), args: asObject(call.args) };
  const response = field<unknown>(p, 'functionResponse');
  if (isPlainObject(response))
    part.functionResponse = {
      id: response.id as string | undefined,
      name: String(response.name ?? ''),
      response: asObject(response.response),
    };
  return part;
}

function asObject(v: unknown): Record<string, unknown> {
  return isPlainObject(v) ? v : {};
}

function modelTurnToHub(parts: GeminiPart[], ids: CallIds): HubMessage {
  ids.startTurn();
  const texts: string[] = [];
  const message: HubMessage = { role: 'assistant', content: null };
  const calls = [];
  for (const part of parts) {
    if (part.functionCall) {
      const { id, name, args } = part.functionCall;
      calls.push({
        id: ids.call(name, id),
        type: 'function' as const,
        function: { name, arguments: JSON.stringify(args ?? {}) },
      });
    } else if (typeof part.text === 'string' && !part.thought) texts.push(part.text);
  }
  const text = texts.join('');
  message.content = text || calls.length === 0 ? text : null;
  if (calls.length > 0) message.tool_calls = calls;
  const blocks = thinkingFromParts(parts);
  if (blocks.length > 0) {
    message.thinking_blocks = blocks;
    const reasoning = blocks.map((b) => b.thinking).join('');
    if (reasoning) message.reasoning_content = reasoning;
  }
  return message;
}

/** Function responses become tool messages, first (they must follow the assistant's calls), then the rest of the
 * turn as one user message. */
function userTurnToHub(parts: GeminiPart[], ids: CallIds): HubMessage[] {
  const out: HubMessage[] = [];
  const content: HubContentPart[] = [];
  for (const part of parts) {
    if (part.functionResponse) {
      const { id, name, response } = part.functionResponse;
      out.push({ role: 'tool', tool_call_id: ids.answer(name, id), content: JSON.stringify(response ?? {}) });
    } else if (part.thought) continue;
    else if (typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    else if (part.inlineData)
      content.push({
        type: 'image_url',
        image_url: { url: `data:${part.inlineData.mimeType};base64,${part.inlineData.data}` },
      });
    else if (part.fileData) {
      const image: HubImagePartWithMime = { type: 'image_url', image_url: { url: part.fileData.fileUri } };
      if (part.fileData.mimeType) image.image_url.mime_type = part.fileData.mimeType;
      content.push(image);
    }
  }
  if (content.length > 0) {
    const only = content[0];
    out.push({ role: 'user', content: content.length === 1 && only.type === 'text' ? only.text : content });
  }
  return out;
}

function applyTools(hub: HubRequest, body: Record<string, any>): void {
  const tools: HubFunctionTool[] = [];
  for (const tool of field<unknown[]>(body, 'tools') ?? []) {
    const declarations = field<unknown>(tool, 'functionDeclarations');
    if (!Array.isArray(declarations)) continue;
    for (const d of declarations) {
      if (!isPlainObject(d)) continue;
      const fn: HubFunctionTool['function'] = { name: String(d.name ?? '') };
      if (typeof d.description === 'string') fn.description = d.description;
      const jsonSchema = field<unknown>(d, 'parametersJsonSchema');
      const schema = field<unknown>(d, 'parameters');
      if (isPlainObject(jsonSchema)) fn.parameters = jsonSchema;
      else if (isPlainObject(schema)) fn.parameters = fromGeminiSchema(schema);
      tools.push({ type: 'function', function: fn });
    }
  }
  const config = field(field(body, 'toolConfig'), 'functionCallingConfig');
  const mode = String(field(config, 'mode') ?? '').toUpperCase();
  const allowed = (field<unknown[]>(config, 'allowedFunctionNames') ?? []).filter(
    (n): n is string => typeof n === 'string',
  );
  let choice: HubToolChoice | undefined;
  if (mode === 'AUTO' || mode === 'VALIDATED') choice = 'auto';
  else if (mode === 'NONE') choice = 'none';
  else if (mode === 'ANY') {
    if (allowed.length === 1) choice = { type: 'function', function: { name: allowed[0] } };
    else choice = 'required';
  }
  // ANY among several named functions: the hub has no such choice, so offer only those functions
  const offered = mode === 'ANY' && allowed.length > 1 ? tools.filter((t) => allowed.includes(t.function.name)) : tools;
  if (offered.length > 0) hub.tools = offered;
  if (choice) hub.tool_choice = choice;
}

const THINKING_LEVELS = new Set(['minimal', 'low', 'medium', 'high']);

function applyGenerationConfig(hub: HubRequest, config: unknown): void {
  if (!isPlainObject(config)) return;
  const num = (name: string): number | undefined => {
    const v = field<unknown>(config, name);
    return typeof v === 'number' ? v : undefined;
  };
  hub.temperature = num('temperature');
  hub.top_p = num('topP');
  hub.top_k = num('topK');
  hub.max_tokens = num('maxOutputTokens');
  hub.n = num('candidateCount');
  hub.seed = num('seed');
  hub.presence_penalty = num('presencePenalty');
  hub.frequency_penalty = num('frequencyPenalty');
  const stop = field<unknown>(config, 'stopSequences');
  if (Array.isArray(stop) && stop.length > 0) hub.stop = stop.filter((s): s is string => typeof s === 'string');
  hub.response_format = responseFormat(config);
  const thinking = field<unknown>(config, 'thinkingConfig');
  const budget = field<unknown>(thinking, 'thinkingBudget');
  if (typeof budget === 'number') hub.thinking_budget = budget; // includeThoughts has no hub meaning: ignored
  const level = field<unknown>(thinking, 'thinkingLevel');
  if (typeof level === 'string' && THINKING_LEVELS.has(level.toLowerCase())) hub.reasoning_effort = level.toLowerCase();
  for (const key of Object.keys(hub) as (keyof HubRequest)[]) if (hub[key] === undefined) delete hub[key];
}

function responseFormat(config: Record<string, unknown>): HubResponseFormat | undefined {
  if (field(config, 'responseMimeType') !== 'application/json') return undefined;
  const jsonSchema = field<unknown>(config, 'responseJsonSchema');
  const schema = field<unknown>(config, 'responseSchema');
  if (isPlainObject(jsonSchema)) return { type: 'json_schema', json_schema: { name: 'response', schema: jsonSchema } };
  if (isPlainObject(schema))
    return { type: 'json_schema', json_schema: { name: 'response', schema: fromGeminiSchema(schema) } };
  return { type: 'json_object' };
}

/** countTokens accepts either bare `contents` or a whole `generateContentRequest`. */
export function countTokensRequestToHub(body: Record<string, any>): HubRequest {
  const inner = field<unknown>(body, 'generateContentRequest');
  return requestToHub(isPlainObject(inner) ? inner : body);
}
