// The keys of a channel save (new-api's AddChannel modes and UpdateChannel's key_mode; services/channels.ts writes
// them): `single` keeps the key whole, `batch` makes one channel per key, `multi_to_single` one channel holding them
// all (services/multi-key.ts). A key list is one key per line, or for a provider whose key is one document (Vertex AI's
// service-account file) a JSON array of them. Every key is checked by the provider's rules.
import type { ChannelFacts } from '../relay/providers/channel-facts.js';
import type { FieldProblem } from '../relay/providers/channel-facts.js';
import {
  ChannelInputError,
  channelFieldsFacts,
  channelFormProblem,
  checkProviderFields,
  isBlank,
  str,
  type Body,
} from './channel-input.js';
import {
  freshMultiKeyInfo,
  joinKeys,
  parseMultiKeyMode,
  reindex,
  splitStoredKeys,
  type ChannelInfo,
  type MultiKeyMode,
} from './multi-key.js';

export type AddMode = 'single' | 'batch' | 'multi_to_single';

export interface AddRequest {
  mode: AddMode;
  body: Body;
  multiKeyMode: MultiKeyMode;
  /** new-api's batch_add_set_key_prefix_2_name: each batch channel's name gets its key's first 8 characters */
  keyPrefixInName: boolean;
}

/**
 * The snapshot's body is the channel itself, split one channel per line (batch); later consoles wrap it as
 * {mode, multi_key_mode, batch_add_set_key_prefix_2_name, channel}.
 */
export function addRequestOf(raw: Body): AddRequest {
  const wrapped = raw && typeof raw.channel === 'object' && raw.channel !== null && typeof raw.mode === 'string';
  if (!wrapped) return { mode: 'batch', body: raw, multiKeyMode: 'random', keyPrefixInName: false };
  const mode = raw.mode;
  if (mode !== 'single' && mode !== 'batch' && mode !== 'multi_to_single')
    throw new ChannelInputError('不支持的添加模式');
  return {
    mode,
    body: raw.channel as Body,
    multiKeyMode: multiKeyModeOf(raw.multi_key_mode) ?? 'random',
    keyPrefixInName: raw.batch_add_set_key_prefix_2_name === true,
  };
}

/** `multi_key_mode` as sent: absent or empty is null (unchanged, or the default); anything else but the two refused. */
export function multiKeyModeOf(v: unknown): MultiKeyMode | null {
  if (isBlank(v) || v === '') return null;
  const mode = parseMultiKeyMode(v);
  if (!mode) throw new ChannelInputError('多密钥模式只能是 random 或 polling');
  return mode;
}

/** The keys a list of keys holds: lines, or for a whole-document key a JSON array of documents (or one document). */
export function keyList(facts: ChannelFacts, key: string): string[] {
  const trimmed = key.trim();
  if (!trimmed) return [];
  if (!facts.wholeKey) return splitStoredKeys(key).filter(Boolean);
  if (!trimmed.startsWith('[')) return [trimmed];
  let arr: unknown;
  try {
    arr = JSON.parse(trimmed);
  } catch {
    throw new ChannelInputError('批量添加 Vertex AI 必须使用标准的JsonArray格式，例如[{key1}, {key2}...]，请检查输入');
  }
  if (!Array.isArray(arr))
    throw new ChannelInputError('批量添加 Vertex AI 必须使用标准的JsonArray格式，例如[{key1}, {key2}...]，请检查输入');
  // each document on one line of compact JSON, as new-api stores them
  return arr.map((v) => (typeof v === 'string' ? v.trim() : JSON.stringify(v))).filter(Boolean);
}

/** The provider's rules on every key of a list (the other fields are checked once, by the caller). */
export function checkEachKey(facts: ChannelFacts, type: number, keys: string[], baseUrl: string): void {
  for (const key of keys) checkProviderFields(facts, type, { key, baseUrl, checkBaseUrl: false });
}

/** The name of one channel of a batch with the key prefix in it. */
export function batchName(name: string, key: string): string {
  return `${name} ${key.slice(0, 8)}`;
}

export interface KeyEdit {
  key: string;
  info: ChannelInfo;
}

/**
 * An edit of a multi-key channel's keys: `append` adds the keys not already there (their statuses untouched), `replace`
 * (the default, as in new-api) sets the list anew, every key enabled. `mode` changes the choice of key when given.
 */
export function editKeys(
  facts: ChannelFacts,
  current: { key: string; info: ChannelInfo },
  body: Body,
  newKey: string | undefined,
): KeyEdit | null {
  const mode = multiKeyModeOf(body.multi_key_mode);
  const keyMode = isBlank(body.key_mode) || body.key_mode === '' ? 'replace' : str(body.key_mode, 'key_mode');
  if (keyMode !== 'append' && keyMode !== 'replace')
    throw new ChannelInputError('密钥更新模式只能是 append 或 replace');
  if (newKey === undefined && !mode) return null;
  const old = splitStoredKeys(current.key);
  let keys = old;
  let info: ChannelInfo = { ...current.info, multi_key_size: old.length };
  if (newKey !== undefined) {
    const added = keyList(facts, newKey);
    if (keyMode === 'append') {
      const seen = new Set(old.map((k) => k.trim()));
      keys = [...old, ...added.filter((k) => !seen.has(k) && (seen.add(k), true))];
      info = reindex(
        info,
        old.map((_, i) => i),
      );
      info.multi_key_size = keys.length;
    } else {
      keys = [...new Set(added)];
      info = freshMultiKeyInfo(keys.length, current.info.multi_key_mode);
    }
  }
  if (mode) info.multi_key_mode = mode;
  if (!keys.length) throw new ChannelInputError('请填写渠道名称和渠道密钥！');
  return { key: joinKeys(keys), info };
}

/**
 * POST /api/channel/check for the drawer's add mode (`mode`: batch or multi_to_single take a key list, a Vertex AI JSON
 * array among them): each key of the list checked as the save will check it.
 */
export function channelFormProblemByMode(body: Body): FieldProblem | null {
  const facts = channelFieldsFacts(body);
  const listed = (body.mode === 'batch' || body.mode === 'multi_to_single') && typeof body.key === 'string';
  if (!facts || !listed || !facts.wholeKey) return channelFormProblem(body);
  let keys: string[];
  try {
    keys = keyList(facts, body.key as string);
  } catch (err) {
    if (err instanceof ChannelInputError) return { field: 'key', message: err.message };
    throw err;
  }
  for (const key of keys.length ? keys : ['']) {
    const problem = channelFormProblem({ ...body, key });
    if (problem) return problem;
  }
  return null;
}
