// JSON Schema ↔ Gemini's Schema (an OpenAPI 3.0 subset) for function parameters and response schemas.
//
// Upstream we send the cleaned `parameters` rather than `parametersJsonSchema`: `parameters` is accepted by every
// Gemini generation and by Vertex AI, while `parametersJsonSchema` only exists on newer models and endpoints. The
// price is this cleaning: Gemini rejects keys outside its Schema (`$schema`, `additionalProperties`, `strict`,
// `$ref`, …), non-string enums, string formats other than enum/date-time, and `required` names that are not
// properties.
import { isPlainObject } from './wire.js';

const KEPT = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

const NUMBER_FORMATS = new Set(['float', 'double', 'int32', 'int64']);
const STRING_FORMATS = new Set(['enum', 'date-time']);
/** refs nested deeper than this are dropped: a recursive schema cannot be inlined */
const MAX_REF_DEPTH = 8;

type Schema = Record<string, unknown>;

/** A JSON Schema → a Gemini `parameters` schema; undefined for an object without properties (Gemini refuses an
 * OBJECT with empty properties, and a function without parameters simply has none). */
export function toGeminiParameters(schema: Schema | undefined): Schema | undefined {
  if (!isPlainObject(schema)) return undefined;
  const out = toGeminiSchema(schema);
  if (out.type === 'object' && !isPlainObject(out.properties)) return undefined;
  return out;
}

export function toGeminiSchema(schema: Schema): Schema {
  const defs = { ...(schema.definitions as Schema | undefined), ...(schema.$defs as Schema | undefined) };
  return clean(schema, defs, 0);
}

function resolveRef(ref: unknown, defs: Schema): Schema | null {
  if (typeof ref !== 'string') return null;
  const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  const target = m ? defs[m[1]] : undefined;
  return isPlainObject(target) ? target : null;
}

function clean(input: Schema, defs: Schema, depth: number): Schema {
  let schema = input;
  if (schema.$ref !== undefined) {
    const target = depth < MAX_REF_DEPTH ? resolveRef(schema.$ref, defs) : null;
    const { $ref: _ref, ...siblings } = schema;
    schema = target ? { ...target, ...siblings } : siblings;
    depth++;
  }
  if (Array.isArray(schema.allOf)) schema = mergeAllOf(schema);
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'oneOf' && Array.isArray(value) && schema.anyOf === undefined) out.anyOf = value;
    else if (key === 'const') out.enum = [value];
    else if (KEPT.has(key)) out[key] = value;
  }
  normalizeType(out);
  if (isPlainObject(out.properties)) {
    const props: Schema = {};
    for (const [name, sub] of Object.entries(out.properties))
      if (isPlainObject(sub)) props[name] = clean(sub, defs, depth);
    if (Object.keys(props).length > 0) out.properties = props;
    else delete out.properties;
  }
  if (Array.isArray(out.required)) {
    const props = isPlainObject(out.properties) ? out.properties : {};
    const required = out.required.filter((n) => typeof n === 'string' && n in props);
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  if (isPlainObject(out.items)) out.items = clean(out.items, defs, depth);
  else delete out.items;
  if (Array.isArray(out.anyOf)) out.anyOf = out.anyOf.filter(isPlainObject).map((s) => clean(s, defs, depth));
  if (out.enum !== undefined) {
    if (Array.isArray(out.enum) && out.enum.every((v) => typeof v === 'string')) {
      out.type ??= 'string';
    } else delete out.enum;
  }
  if (typeof out.format === 'string') {
    const allowed = out.type === 'string' ? STRING_FORMATS : NUMBER_FORMATS;
    if (!allowed.has(out.format)) delete out.format;
  }
  return out;
}

/** `type: ["string", "null"]` → `type: string, nullable: true` (Gemini's Schema has one type and a nullable flag). */
function normalizeType(out: Schema): void {
  if (!Array.isArray(out.type)) return;
  const types = out.type.filter((t): t is string => typeof t === 'string');
  const concrete = types.filter((t) => t !== 'null');
  if (concrete.length < types.length) out.nullable = true;
  if (concrete.length === 1) out.type = concrete[0];
  else if (concrete.length === 0) delete out.type;
  else {
    delete out.type;
    out.anyOf = concrete.map((t) => ({ type: t }));
  }
}

function mergeAllOf(schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  const merged: Schema = { ...rest };
  for (const sub of allOf as unknown[]) {
    if (!isPlainObject(sub)) continue;
    for (const [key, value] of Object.entries(sub)) {
      if (key === 'properties' && isPlainObject(value))
        merged.properties = { ...(merged.properties as Schema | undefined), ...value };
      else if (key === 'required' && Array.isArray(value))
        merged.required = [...((merged.required as unknown[] | undefined) ?? []), ...value];
      else merged[key] ??= value;
    }
  }
  return merged;
}

/** A Gemini Schema (types in capitals, `nullable`) → JSON Schema for the hub. */
export function fromGeminiSchema(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'propertyOrdering' || key === 'nullable') continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'format' && value === 'enum') continue;
    else if (key === 'properties' && isPlainObject(value)) {
      const props: Schema = {};
      for (const [name, sub] of Object.entries(value)) props[name] = isPlainObject(sub) ? fromGeminiSchema(sub) : sub;
      out.properties = props;
    } else if (key === 'items' && isPlainObject(value)) out.items = fromGeminiSchema(value);
    else if (key === 'anyOf' && Array.isArray(value))
      out.anyOf = value.map((s) => (isPlainObject(s) ? fromGeminiSchema(s) : s));
    else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}
