// What the Gemini API (generativelanguage) refuses, as the mock checks it. Google parses the body as a protobuf
// message: an unknown field anywhere is a 400 naming it, and both lowerCamel and snake_case names are accepted.
// Then the conversation is checked (roles, function call / response turns) and the model's abilities (thinking).

export interface GoogleProblem {
  code: number;
  status: string;
  message: string;
  details?: unknown[];
}

const invalid = (message: string, details?: unknown[]): GoogleProblem => ({
  code: 400,
  status: 'INVALID_ARGUMENT',
  message,
  ...(details ? { details } : {}),
});

/** Field names in both the JSON (lowerCamel) and proto (snake_case) spellings Google accepts. */
function fieldSet(...camel: string[]): Set<string> {
  const out = new Set<string>();
  for (const name of camel) {
    out.add(name);
    out.add(name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  }
  return out;
}

const GENERATE_FIELDS = fieldSet(
  'contents',
  'tools',
  'toolConfig',
  'safetySettings',
  'systemInstruction',
  'generationConfig',
  'cachedContent',
);

const GENERATION_CONFIG_FIELDS = fieldSet(
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'enableEnhancedCivicAnswers',
  'speechConfig',
  'thinkingConfig',
  'imageConfig',
  'mediaResolution',
);

const THINKING_CONFIG_FIELDS = fieldSet('includeThoughts', 'thinkingBudget', 'thinkingLevel');

const COUNT_TOKENS_FIELDS = fieldSet('contents', 'generateContentRequest');
const EMBED_FIELDS = fieldSet('model', 'content', 'taskType', 'title', 'outputDimensionality');
const BATCH_EMBED_FIELDS = fieldSet('requests');

/** A value of `obj` under its lowerCamel or snake_case name. */
export function field(obj: any, camel: string): any {
  if (obj === null || typeof obj !== 'object') return undefined;
  return obj[camel] ?? obj[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

/** Google's unknown-field refusal: one line per field, each also a BadRequest field violation. */
function unknownFields(obj: any, allowed: Set<string>, at?: string): GoogleProblem | null {
  const unknown = Object.keys(obj ?? {}).filter((k) => !allowed.has(k));
  if (unknown.length === 0) return null;
  const lines = unknown.map(
    (k) => `Invalid JSON payload received. Unknown name "${k}"${at ? ` at '${at}'` : ''}: Cannot find field.`,
  );
  return invalid(lines.join('\n'), [
    {
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: lines.map((description) => ({ ...(at ? { field: at } : {}), description })),
    },
  ]);
}

/** Models that think: 2.5 and later, and the experimental thinking models. */
export function modelThinks(model: string): boolean {
  return /gemini-(2\.5|[3-9])/.test(model) || model.includes('thinking');
}

export function checkGenerateBody(body: any, model: string): GoogleProblem | null {
  const unknown = unknownFields(body, GENERATE_FIELDS);
  if (unknown) return unknown;
  const config = field(body, 'generationConfig');
  if (config !== undefined) {
    const problem = unknownFields(config, GENERATION_CONFIG_FIELDS, 'generation_config');
    if (problem) return problem;
    const thinking = field(config, 'thinkingConfig');
    if (thinking !== undefined) {
      const nested = unknownFields(thinking, THINKING_CONFIG_FIELDS, 'generation_config.thinking_config');
      if (nested) return nested;
      const ability = checkThinking(thinking, model);
      if (ability) return ability;
    }
  }
  return checkContents(field(body, 'contents'), 'GenerateContentRequest');
}

function checkThinking(thinking: any, model: string): GoogleProblem | null {
  if (!modelThinks(model)) return invalid(`Thinking is not enabled for models/${model}`);
  const budget = field(thinking, 'thinkingBudget');
  if (budget === 0 && /gemini-2\.5-pro/.test(model))
    return invalid('Budget 0 is invalid. This model only works in thinking mode.');
  if (field(thinking, 'thinkingLevel') !== undefined && /gemini-2\./.test(model))
    return invalid('Thinking level is not supported for this model.');
  const range = budgetRange(model);
  // -1 asks for a dynamic budget and 0 turns thinking off (where allowed, above): both outside the range
  if (range && typeof budget === 'number' && budget !== -1 && budget !== 0 && (budget < range[0] || budget > range[1]))
    return invalid(
      `The thinking budget ${budget} is invalid. Please choose a value between ${range[0]} and ${range[1]}.`,
    );
  return null;
}

/** The thinking budgets a 2.5 model takes, as Google documents them (later models: not checked). */
function budgetRange(model: string): [number, number] | null {
  if (/gemini-2\.5-flash-lite/.test(model)) return [512, 24576];
  if (/gemini-2\.5-pro/.test(model)) return [128, 32768];
  if (/gemini-2\.5-flash/.test(model)) return [1, 24576];
  return null;
}

const hasPart = (content: any, kind: string) => (content?.parts ?? []).some((p: any) => field(p, kind) !== undefined);
const countParts = (content: any, kind: string) =>
  (content?.parts ?? []).filter((p: any) => field(p, kind) !== undefined).length;

/** The conversation: present, parts in every turn, roles user/model, function responses right after their calls. */
export function checkContents(contents: any, request: string): GoogleProblem | null {
  if (!Array.isArray(contents) || contents.length === 0)
    return invalid(`* ${request}.contents: contents is not specified\n`);
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    if (c?.role !== undefined && c.role !== 'user' && c.role !== 'model')
      return invalid('Please use a valid role: user, model.');
    if (!Array.isArray(c?.parts) || c.parts.length === 0)
      return invalid(`* ${request}.contents[${i}].parts: contents.parts must not be empty.\n`);
  }
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const previous = contents[i - 1];
    if (hasPart(c, 'functionResponse')) {
      if (!previous || previous.role !== 'model' || !hasPart(previous, 'functionCall'))
        return invalid('Please ensure that function response turn comes immediately after a function call turn.');
      if (countParts(c, 'functionResponse') !== countParts(previous, 'functionCall'))
        return invalid(
          'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
        );
    }
    if (hasPart(c, 'functionCall') && previous && previous.role === 'model')
      return invalid(
        'Please ensure that function call turn comes immediately after a user turn or after a function response turn.',
      );
  }
  return null;
}

export function checkCountTokensBody(body: any, model: string): GoogleProblem | null {
  const unknown = unknownFields(body, COUNT_TOKENS_FIELDS);
  if (unknown) return unknown;
  const inner = field(body, 'generateContentRequest');
  if (field(body, 'contents') !== undefined && inner !== undefined)
    return invalid('contents and generate_content_request cannot both be set.');
  if (inner !== undefined) {
    // the wrapped request names its model, so "model" is a known field there
    const { model: _model, ...rest } = inner;
    return checkGenerateBody(rest, model);
  }
  return checkContents(field(body, 'contents'), 'CountTokensRequest');
}

export function checkEmbedBody(body: any): GoogleProblem | null {
  return unknownFields(body, EMBED_FIELDS) ?? checkEmbedContent(field(body, 'content'), 'EmbedContentRequest');
}

function checkEmbedContent(content: any, request: string): GoogleProblem | null {
  if (content === undefined) return invalid(`* ${request}.content: content is not specified\n`);
  if (!Array.isArray(content.parts) || content.parts.length === 0)
    return invalid(`* ${request}.content.parts: contents.parts must not be empty.\n`);
  return null;
}

export function checkBatchEmbedBody(body: any, model: string): GoogleProblem | null {
  const unknown = unknownFields(body, BATCH_EMBED_FIELDS);
  if (unknown) return unknown;
  const requests = field(body, 'requests');
  if (!Array.isArray(requests) || requests.length === 0)
    return invalid('* BatchEmbedContentsRequest.requests: requests is not specified\n');
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i];
    const problem = unknownFields(r, EMBED_FIELDS, `requests[${i}]`);
    if (problem) return problem;
    if (r.model !== `models/${model}`)
      return invalid(
        `Model name in the request (${r.model}) does not match the model name in the batch request (models/${model}).`,
      );
    const content = checkEmbedContent(field(r, 'content'), `BatchEmbedContentsRequest.requests[${i}]`);
    if (content) return content;
  }
  return null;
}
