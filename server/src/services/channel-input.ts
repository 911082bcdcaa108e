// Channel input (new-api-compat.md §2.3; spec §5 Channel form): the console's fields normalised and checked, by the
// common rules and by the provider's own (its folder's channel.ts, through the facts registry), before
// services/channels.ts writes them. Throws ChannelInputError with the message a person sees.
import { channelBaseUrl } from './channel-types.js';
import { channelFactsOf, unsupportedTypeMessage } from './channel-protocols.js';
import {
  channelFieldsProblem,
  type ChannelCheckInput,
  type ChannelFacts,
  type FieldProblem,
} from '../relay/providers/channel-facts.js';
import type { Channel } from '../db/schema.js';
import { MODEL_NAME_MAX, intInput } from '../lib/input.js';
import { splitCommaList } from './abilities.js';

export class ChannelInputError extends Error {}

export type Body = Record<string, unknown>;

export const isBlank = (v: unknown) => v === undefined || v === null;

export function str(v: unknown, field: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new ChannelInputError(`${field} 必须是字符串`);
}

export const intOf = (v: unknown) => intInput(v);

export function parsePriority(v: unknown): number {
  const n = intOf(v);
  if (n === null || n < -999 || !Number.isSafeInteger(n)) throw new ChannelInputError('优先级必须是整数！');
  return n;
}

export function parseWeight(v: unknown): number {
  const n = intOf(v);
  if (n === null || n < 0 || !Number.isSafeInteger(n)) throw new ChannelInputError('权重必须是非负整数！');
  return n;
}

/** A comma string or a list, normalised to a trimmed, de-duplicated comma string. */
export function commaList(v: unknown, field: string): string {
  if (Array.isArray(v)) return splitCommaList(v.map((x) => str(x, field)).join(',')).join(',');
  return splitCommaList(str(v, field)).join(',');
}

export function jsonText(v: unknown, message: string, requireObject = true): string | null {
  if (isBlank(v)) return null;
  if (typeof v === 'object') return JSON.stringify(v);
  const text = str(v, 'json').trim();
  if (!text) return '';
  try {
    const parsed = JSON.parse(text);
    if (requireObject && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)))
      throw new Error('not an object');
  } catch {
    throw new ChannelInputError(message);
  }
  return text;
}

// MySQL's default collation compares names case-insensitively, so two spellings differing only in case would
// collide on the abilities primary key there; refuse them everywhere so all databases behave alike.
function checkCaseDuplicates(list: string[], what: string): void {
  const seen = new Set<string>();
  for (const v of list) {
    const k = v.toLowerCase();
    if (seen.has(k)) throw new ChannelInputError(`${what}重复（仅大小写不同）: ${v}`);
    seen.add(k);
  }
}

export function checkModels(models: string): void {
  if (!models) throw new ChannelInputError('请至少选择一个模型！');
  const list = models.split(',');
  for (const m of list) {
    // longer names would be relayed and charged, then lost with their consume log row
    if (m.length > MODEL_NAME_MAX) throw new ChannelInputError(`模型名称过长: ${m}`);
  }
  checkCaseDuplicates(list, '模型名称');
}

export function checkGroups(group: string): void {
  if (!group) throw new ChannelInputError('请至少选择一个分组！');
  const list = group.split(',');
  for (const g of list) {
    if (g.length > 64) throw new ChannelInputError(`分组名称过长: ${g}`);
  }
  checkCaseDuplicates(list, '分组名称');
}

export type ChannelFields = Partial<
  Omit<
    Channel,
    'id' | 'used_quota' | 'balance' | 'balance_updated_time' | 'test_time' | 'response_time' | 'channel_info'
  > & { channel_info: string }
>;

/** The writable fields present in a request body, validated. Absent fields stay absent (partial update). */
export function channelFields(body: Body): ChannelFields {
  const out: ChannelFields = {};
  if (!isBlank(body.name)) out.name = str(body.name, 'name').trim();
  if (!isBlank(body.type)) {
    const t = intOf(body.type);
    if (t === null || t < 0) throw new ChannelInputError('渠道类型无效');
    out.type = t;
  }
  if (!isBlank(body.key)) out.key = str(body.key, 'key');
  if (body.openai_organization !== undefined)
    out.open_ai_organization = isBlank(body.openai_organization)
      ? null
      : str(body.openai_organization, 'openai_organization');
  if (body.test_model !== undefined)
    out.test_model = isBlank(body.test_model) ? null : str(body.test_model, 'test_model').trim();
  if (body.base_url !== undefined)
    out.base_url = isBlank(body.base_url) ? '' : str(body.base_url, 'base_url').trim().replace(/\/+$/, '');
  if (body.other !== undefined) out.other = isBlank(body.other) ? '' : str(body.other, 'other');
  if (!isBlank(body.models)) {
    out.models = commaList(body.models, 'models');
    checkModels(out.models);
  }
  const groups = !isBlank(body.groups) && Array.isArray(body.groups) ? body.groups : body.group;
  if (!isBlank(groups)) {
    out.group = commaList(groups, 'group');
    checkGroups(out.group);
  }
  if (body.model_mapping !== undefined)
    out.model_mapping = jsonText(body.model_mapping, '模型映射必须是合法的 JSON 格式！');
  if (body.status_code_mapping !== undefined)
    out.status_code_mapping = jsonText(body.status_code_mapping, '状态码复写必须是合法的 JSON 格式！') ?? '';
  if (body.setting !== undefined) out.setting = jsonText(body.setting, '渠道额外设置必须是合法的 JSON 格式！');
  if (body.param_override !== undefined)
    out.param_override = jsonText(body.param_override, '参数覆盖必须是合法的 JSON 格式！');
  if (!isBlank(body.priority)) out.priority = parsePriority(body.priority);
  if (!isBlank(body.weight)) out.weight = parseWeight(body.weight);
  if (!isBlank(body.auto_ban)) {
    const n = typeof body.auto_ban === 'boolean' ? (body.auto_ban ? 1 : 0) : intOf(body.auto_ban);
    if (n !== 0 && n !== 1) throw new ChannelInputError('auto_ban 只能是 0 或 1');
    out.auto_ban = n;
  }
  if (body.tag !== undefined)
    out.tag = isBlank(body.tag) || str(body.tag, 'tag').trim() === '' ? null : str(body.tag, 'tag').trim();
  if (!isBlank(body.status)) {
    const s = intOf(body.status);
    if (s !== 1 && s !== 2 && s !== 3) throw new ChannelInputError('渠道状态无效');
    out.status = s;
  }
  if (!isBlank(body.max_input_tokens)) {
    const n = intOf(body.max_input_tokens);
    if (n === null || n < 0) throw new ChannelInputError('max_input_tokens 必须是非负整数');
    out.max_input_tokens = n;
  }
  return out;
}

/**
 * The provider's rules for the fields a save sets (its folder's channel.ts, through the facts registry): a required
 * base URL, the key's format, what `other` must hold. Throws the first problem.
 */
export function checkProviderFields(
  facts: ChannelFacts,
  type: number,
  input: Omit<ChannelCheckInput, 'defaultBaseUrl'>,
): void {
  const problem = channelFieldsProblem(facts, { ...input, defaultBaseUrl: channelBaseUrl(type) });
  if (problem) throw new ChannelInputError(problem.message);
}

/** The facts of a type the relay serves; a type without a provider is refused. */
export function factsOrRefuse(type: number): ChannelFacts {
  const facts = channelFactsOf(type);
  if (!facts) throw new ChannelInputError(unsupportedTypeMessage(type));
  return facts;
}

/** The facts of the form's type when the relay serves it (the check refuses other types itself). */
export function channelFieldsFacts(body: Body): ChannelFacts | undefined {
  const t = intOf(body?.type);
  return channelFactsOf(t === null ? 1 : t);
}

/**
 * POST /api/channel/check: the console's form checked by the rules a save applies, so the drawer shows the server's
 * message under the field before saving. The fields absent from the body are not checked (an edit's empty key keeps
 * the stored one); the save checks them again. A type the relay does not serve, or a field of the wrong JSON type,
 * throws as a save would.
 */
export function channelFormProblem(body: Body): FieldProblem | null {
  const fields = channelFields({
    type: body?.type,
    key: body?.key,
    base_url: body?.base_url,
    other: body?.other,
  });
  const type = fields.type ?? 1;
  return channelFieldsProblem(factsOrRefuse(type), {
    key: fields.key,
    other: fields.other,
    baseUrl: fields.base_url ?? '',
    checkBaseUrl: true,
    defaultBaseUrl: channelBaseUrl(type),
  });
}
