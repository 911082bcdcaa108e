// Function calling on Cohere's v1 chat, both ways:
//   tools         OpenAI's {type: function, function: {name, description, parameters (JSON Schema)}}
//              →  {name, description, parameter_definitions: {<param>: {type, description, required}}}: one level of
//                 parameters, their types in Cohere's names (str, int, float, bool, List[…], Dict); a nested schema is
//                 described by its JSON type alone
//   calls         an assistant turn's tool_calls → a CHATBOT turn's tool_calls [{name, parameters (an object)}]
//   results       tool messages → tool_results [{call: {name, parameters}, outputs: [object…]}]: in `tool_results`
//                 (with an empty `message`) when they end the conversation, else a TOOL turn of chat_history; the
//                 call each answers is found by its id among the assistant's calls (Cohere's calls have no id)
//   answer        tool_calls [{name, parameters}] → OpenAI's, with ids made here; finish reason tool_calls
// tool_choice: `none` sends no tools, a named function only that tool; `required` cannot be said in v1 and is refused.
import { FormatError } from '../../formats/codec.js';
import type { HubMessage, HubRequest, HubToolCall } from '../../hub/types.js';

type Json = Record<string, any>;

const TYPES: Record<string, string> = {
  string: 'str',
  integer: 'int',
  number: 'float',
  boolean: 'bool',
  object: 'Dict',
};

function cohereType(schema: Json): string {
  if (schema?.type === 'array') {
    const item = schema.items?.type ? cohereType(schema.items) : 'str';
    return `List[${item}]`;
  }
  return TYPES[String(schema?.type)] ?? 'str';
}

/** OpenAI's tools in Cohere's shape; none when the client's tool_choice is `none`. */
export function cohereTools(hub: HubRequest): Json[] | undefined {
  const choice = hub.tool_choice;
  if (!hub.tools?.length || choice === 'none') return undefined;
  if (choice === 'required') throw new FormatError('Cohere v1 不支持 tool_choice required', 400, 'tool_choice');
  const named = typeof choice === 'object' ? choice.function.name : null;
  return hub.tools
    .filter((t) => named === null || t.function.name === named)
    .map((t) => {
      const params = (t.function.parameters ?? {}) as Json;
      const required = new Set<string>(Array.isArray(params.required) ? params.required : []);
      const defs: Json = {};
      for (const [name, schema] of Object.entries<Json>(params.properties ?? {})) {
        const def: Json = { type: cohereType(schema), required: required.has(name) };
        const about = [schema?.description, schema?.enum ? `one of: ${schema.enum.join(', ')}` : undefined]
          .filter(Boolean)
          .join('; ');
        if (about) def.description = about;
        defs[name] = def;
      }
      const tool: Json = { name: t.function.name, parameter_definitions: defs };
      if (t.function.description) tool.description = t.function.description;
      return tool;
    });
}

function argumentsOf(call: HubToolCall): Json {
  try {
    const parsed = JSON.parse(call.function.arguments || '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    throw new FormatError(`tool call ${call.function.name} has arguments that are not JSON`, 400, 'messages');
  }
}

export const cohereCall = (call: HubToolCall) => ({ name: call.function.name, parameters: argumentsOf(call) });

/** A tool's output as Cohere's list of objects: a JSON object (or list of them) as it is, anything else wrapped. */
function outputsOf(content: string): Json[] {
  try {
    const j = JSON.parse(content);
    if (j && typeof j === 'object' && !Array.isArray(j)) return [j];
    if (Array.isArray(j) && j.every((o) => o && typeof o === 'object' && !Array.isArray(o))) return j;
  } catch {
    /* plain text: wrapped below */
  }
  return [{ result: content }];
}

/** The tool results of `results` (tool messages), each with the call it answers found among `calls` by id. */
export function cohereResults(results: HubMessage[], calls: Map<string, HubToolCall>, text: (m: HubMessage) => string) {
  return results.map((m) => {
    const call = calls.get(m.tool_call_id ?? '');
    if (!call) throw new FormatError(`tool result ${m.tool_call_id ?? ''} answers no call of the conversation`, 400);
    return { call: cohereCall(call), outputs: outputsOf(text(m)) };
  });
}

/** The calls of a Cohere answer or stream as OpenAI's, with ids made from the generation's. */
export function hubCalls(calls: unknown, idBase: string): HubToolCall[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((c: Json, i) => ({
    id: `call_${idBase || 'cohere'}_${i}`,
    type: 'function',
    function: { name: String(c?.name ?? ''), arguments: JSON.stringify(c?.parameters ?? {}) },
  }));
}

/** Reads a Cohere tool's definition back as OpenAI's (the mock and the conformance test). */
export function toolToHub(t: Json) {
  const properties: Json = {};
  const required: string[] = [];
  for (const [name, def] of Object.entries<Json>(t.parameter_definitions ?? {})) {
    properties[name] = { type: def.type, description: def.description };
    if (def.required) required.push(name);
  }
  return {
    type: 'function' as const,
    function: { name: t.name, description: t.description, parameters: { type: 'object', properties, required } },
  };
}

/** A Cohere result's output read back as the tool message's text. */
export function outputText(outputs: Json[]): string {
  if (outputs.length === 1 && Object.keys(outputs[0]).length === 1 && typeof outputs[0].result === 'string')
    return outputs[0].result;
  return JSON.stringify(outputs.length === 1 ? outputs[0] : outputs);
}
