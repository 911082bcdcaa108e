// Channel administration (new-api-compat.md §2.3, §3.4; spec §5 Channel form, Tag edit, inline edit and batch).
// Every write runs in one transaction together with the abilities rebuild, then announces `channels` so the
// relay's channel cache reloads. Keys never leave the server through these reads.
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import type { Channel, Database } from '../db/schema.js';
import { nowSec } from '../lib/time.js';
import { consoleAcceptsType, unsupportedTypeMessage } from './channel-protocols.js';
import {
  SINGLE_KEY_INFO_JSON,
  parseChannelInfo,
  serializeChannelInfo,
  freshMultiKeyInfo,
  joinKeys,
  type ChannelInfo,
} from './multi-key.js';
import { addRequestOf, batchName, checkEachKey, editKeys, keyList } from './multi-key-input.js';
import { likeContains } from '../db/like.js';
import { rebuildAbilitiesFor, rebuildAllAbilities, splitCommaList } from './abilities.js';
import {
  ChannelInputError,
  channelFields,
  checkGroups,
  checkModels,
  checkProviderFields,
  commaList,
  factsOrRefuse,
  intOf,
  isBlank,
  jsonText,
  parsePriority,
  parseWeight,
  str,
  type Body,
  type ChannelFields,
} from './channel-input.js';

export { ChannelInputError, channelFormProblem, parsePriority, parseWeight } from './channel-input.js';

export const CHANNEL_STATUS_ENABLED = 1;
export const CHANNEL_STATUS_MANUALLY_DISABLED = 2;
export const CHANNEL_STATUS_AUTO_DISABLED = 3;

// The console API names the organization as new-api's JSON does (openai_organization), not as its column, and
// channel_info as the object new-api answers (whatever the database's driver read).
export type PublicChannel = Omit<Channel, 'key' | 'open_ai_organization' | 'channel_info'> & {
  openai_organization: string | null;
  channel_info: ChannelInfo;
};

type Executor = Kysely<Database> | Transaction<Database>;

const PUBLIC_COLUMNS = [
  'id',
  'type',
  'open_ai_organization as openai_organization',
  'test_model',
  'status',
  'name',
  'weight',
  'created_time',
  'test_time',
  'response_time',
  'base_url',
  'other',
  'balance',
  'balance_updated_time',
  'models',
  'group',
  'used_quota',
  'model_mapping',
  'status_code_mapping',
  'priority',
  'auto_ban',
  'other_info',
  'tag',
  'setting',
  'param_override',
  'max_input_tokens',
  'channel_info',
] as const;

function publicSelect(db: Executor) {
  return db.selectFrom('channels').select(PUBLIC_COLUMNS);
}

function publicRow<T extends { channel_info: unknown }>(
  row: T,
): Omit<T, 'channel_info'> & { channel_info: ChannelInfo } {
  return { ...row, channel_info: parseChannelInfo(row.channel_info) };
}

// ---------------------------------------------------------------------------------------------------------
// reads

export interface ListQuery {
  page: number;
  pageSize: number;
  idSort: boolean;
  tagMode: boolean;
}

function ordered<T extends { orderBy: (...a: any[]) => T }>(q: T, idSort: boolean): T {
  return idSort ? q.orderBy('id', 'desc') : q.orderBy('priority', 'desc').orderBy('id', 'desc');
}

/**
 * Tag mode: one row per tag (placed where its first member sorts) holding all its members, untagged channels as
 * rows of their own. Paging counts these rows; the answer stays a flat channel array with each tag's members
 * next to each other (new-api's shape), so the console can fold them under a tag parent.
 */
export function groupByTag(channels: PublicChannel[]): PublicChannel[][] {
  const rows: PublicChannel[][] = [];
  const tags = new Map<string, PublicChannel[]>();
  for (const ch of channels) {
    if (!ch.tag) {
      rows.push([ch]);
      continue;
    }
    let members = tags.get(ch.tag);
    if (!members) {
      members = [];
      tags.set(ch.tag, members);
      rows.push(members);
    }
    members.push(ch);
  }
  return rows;
}

/** `total` counts rows: channels, or in tag mode tags plus untagged channels. */
export async function listChannels(db: Executor, q: ListQuery): Promise<{ items: PublicChannel[]; total: number }> {
  const offset = q.page * q.pageSize;
  if (q.tagMode) {
    const all = (await ordered(publicSelect(db), q.idSort).execute()).map(publicRow);
    const rows = groupByTag(all);
    return { items: rows.slice(offset, offset + q.pageSize).flat(), total: rows.length };
  }
  const items = (await ordered(publicSelect(db), q.idSort).limit(q.pageSize).offset(offset).execute()).map(publicRow);
  const { n } = await db
    .selectFrom('channels')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return { items, total: Number(n) };
}

export interface SearchQuery {
  keyword: string;
  group: string;
  model: string;
  idSort: boolean;
  tagMode: boolean;
}

/**
 * GET /api/channel/search: keyword matches id, name, base URL (substring) or the exact key; no paging
 * (new-api-compat.md §3.4).
 */
export async function searchChannels(db: Executor, q: SearchQuery): Promise<PublicChannel[]> {
  let query = publicSelect(db);
  const kw = q.keyword.trim();
  if (kw) {
    query = query.where((eb) => {
      const ors = [likeContains('name', kw), likeContains('base_url', kw), eb('key', '=', kw)];
      if (/^\d+$/.test(kw) && Number.isSafeInteger(Number(kw))) ors.push(eb('id', '=', Number(kw)));
      return eb.or(ors);
    });
  }
  const group = q.group.trim();
  if (group) query = query.where(likeContains('group', group));
  const model = q.model.trim();
  if (model) query = query.where(likeContains('models', model));
  let rows = (await ordered(query, q.idSort).execute()).map(publicRow);
  // LIKE narrows the candidates; the group filter must match a whole list element ("vip" is not "svip").
  if (group) rows = rows.filter((c) => splitCommaList(c.group).includes(group));
  return q.tagMode ? groupByTag(rows).flat() : rows;
}

export async function getChannel(db: Executor, id: number): Promise<PublicChannel | undefined> {
  const row = await publicSelect(db).where('id', '=', id).executeTakeFirst();
  return row && publicRow(row);
}

// ---------------------------------------------------------------------------------------------------------
// writes

async function inTx<T>(ctx: AppContext, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  const result = await ctx.db.transaction().execute(fn);
  ctx.changes.publish({ kind: 'channels' });
  return result;
}

async function insertChannel(
  trx: Transaction<Database>,
  ctx: AppContext,
  values: Record<string, unknown>,
): Promise<number> {
  if (ctx.dbKind === 'postgres') {
    const row = await trx
      .insertInto('channels')
      .values(values as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }
  const res = await trx
    .insertInto('channels')
    .values(values as never)
    .executeTakeFirstOrThrow();
  return Number(res.insertId);
}

/**
 * POST /api/channel/. The snapshot body is the channel itself and its key is split by newline into one channel per
 * line (Vertex AI excepted: its key is one JSON document). Later frontends wrap it as {mode, channel}: `single` keeps
 * the key whole, `batch` splits it (Vertex AI: a JSON array), `multi_to_single` makes one multi-key channel
 * (services/multi-key.ts) choosing its key by `multi_key_mode`.
 */
export async function createChannels(ctx: AppContext, raw: Body): Promise<number[]> {
  const add = addRequestOf(raw);
  const body = add.body;
  const name = isBlank(body.name) ? '' : str(body.name, 'name').trim();
  const key = isBlank(body.key) ? '' : str(body.key, 'key');
  if (!name || !key.trim()) throw new ChannelInputError('请填写渠道名称和渠道密钥！');
  if (isBlank(body.models) || commaList(body.models, 'models') === '')
    throw new ChannelInputError('请至少选择一个模型！');
  const fields = channelFields(body);
  const type = fields.type ?? 1;
  const facts = factsOrRefuse(type);
  const keys = add.mode === 'single' ? [key.trim()] : keyList(facts, key);
  if (!keys.length) throw new ChannelInputError('请填写渠道名称和渠道密钥！');
  checkProviderFields(facts, type, {
    key: keys[0],
    other: fields.other ?? '',
    baseUrl: fields.base_url ?? '',
    checkBaseUrl: true,
  });
  checkEachKey(facts, type, keys.slice(1), fields.base_url ?? '');
  const base = {
    ...fields,
    name,
    type,
    group: fields.group ?? 'default',
    status: fields.status ?? CHANNEL_STATUS_ENABLED,
    other: fields.other || facts.defaultOther || '',
    priority: fields.priority ?? 0,
    weight: fields.weight ?? 0,
    auto_ban: fields.auto_ban ?? 1,
    created_time: nowSec(),
    channel_info: SINGLE_KEY_INFO_JSON,
  };
  const rows =
    add.mode === 'multi_to_single'
      ? [
          {
            ...base,
            key: joinKeys(keys),
            channel_info: serializeChannelInfo(freshMultiKeyInfo(keys.length, add.multiKeyMode)),
          },
        ]
      : keys.map((k) => ({
          ...base,
          key: k,
          name: add.keyPrefixInName && keys.length > 1 ? batchName(name, k) : name,
        }));
  return inTx(ctx, async (trx) => {
    const ids: number[] = [];
    for (const row of rows) ids.push(await insertChannel(trx, ctx, row));
    await rebuildAbilitiesFor(trx, ids);
    return ids;
  });
}

/**
 * POST /api/channel/copy/:id (new-api's later console API): a new channel with every field of the source, its key
 * included, named with `suffix` appended, never tested; `resetBalance` also starts its balance and used quota at 0.
 * Returns the new id, or null when the source does not exist.
 */
export async function copyChannel(
  ctx: AppContext,
  id: number,
  suffix: string,
  resetBalance: boolean,
): Promise<number | null> {
  return inTx(ctx, async (trx) => {
    const src = await trx.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
    if (!src) return null;
    if (!consoleAcceptsType(src.type)) throw new ChannelInputError(unsupportedTypeMessage(src.type));
    const { id: _id, ...fields } = src;
    const copy = {
      ...fields,
      // the driver may have read the json column parsed; written back as text, with the copy's own turn from key 0
      channel_info: serializeChannelInfo({ ...parseChannelInfo(src.channel_info), multi_key_polling_index: 0 }),
      name: src.name + suffix,
      created_time: nowSec(),
      test_time: 0,
      response_time: 0,
    };
    if (resetBalance) Object.assign(copy, { balance: 0, balance_updated_time: 0, used_quota: 0 });
    const newId = await insertChannel(trx, ctx, copy);
    await rebuildAbilitiesFor(trx, [newId]);
    return newId;
  });
}

/** An edit that changes nothing but a status other than enabled. */
function onlyDisables(fields: ChannelFields): boolean {
  const keys = Object.keys(fields);
  return keys.length === 1 && keys[0] === 'status' && fields.status !== CHANNEL_STATUS_ENABLED;
}

/**
 * PUT /api/channel/. Only the fields present are written (new-api's gorm Updates skips zero values, which is how
 * the inline {id, status|priority|weight} edits work); an empty key keeps the stored one.
 */
export async function updateChannel(ctx: AppContext, body: Body): Promise<PublicChannel> {
  const id = intOf(body?.id);
  if (id === null || id <= 0) throw new ChannelInputError('渠道 ID 无效');
  if (typeof body.name === 'string' && body.name.trim() === '')
    throw new ChannelInputError('请填写渠道名称和渠道密钥！');
  if (body.models !== undefined && body.models !== null && commaList(body.models, 'models') === '')
    throw new ChannelInputError('请至少选择一个模型！');
  const fields = channelFields(body);
  if (fields.key !== undefined) {
    fields.key = fields.key.trim();
    if (!fields.key) delete fields.key;
  }
  return inTx(ctx, async (trx) => {
    let read = trx.selectFrom('channels').select(['id', 'type', 'other', 'base_url', 'key', 'channel_info']);
    // the row's key list and channel_info are rewritten from what is read: no key disabled meanwhile is lost
    if (ctx.dbKind !== 'sqlite') read = read.forUpdate();
    const current = await read.where('id', '=', id).executeTakeFirst();
    if (!current) throw new ChannelInputError('渠道不存在');
    const multi = multiKeyEdit(fields, body, current);
    const type = fields.type ?? current.type;
    // a channel of a type without an adaptor (one new-api wrote) may still be switched off; anything else is refused
    if (!consoleAcceptsType(type) && !onlyDisables(fields)) throw new ChannelInputError(unsupportedTypeMessage(type));
    // the provider's rules apply to the fields the edit sets (a new type: to the fields it keeps), so an inline edit
    // of another field still goes through on a channel saved before these checks
    const typeChanged = type !== current.type;
    const setsProviderField = [fields.type, fields.key, fields.base_url, fields.other].some((f) => f !== undefined);
    if (consoleAcceptsType(type) && setsProviderField)
      checkProviderFields(factsOrRefuse(type), type, {
        key: multi ? undefined : (fields.key ?? (typeChanged ? current.key : undefined)),
        other: fields.other ?? (typeChanged ? (current.other ?? '') : undefined),
        baseUrl: fields.base_url ?? current.base_url ?? '',
        checkBaseUrl: fields.base_url !== undefined || fields.type !== undefined,
      });
    if (multi) {
      if (consoleAcceptsType(type)) checkEachKey(factsOrRefuse(type), type, multi.added, current.base_url ?? '');
      if (multi.edit)
        Object.assign(fields, { key: multi.edit.key, channel_info: serializeChannelInfo(multi.edit.info) });
    }
    if (Object.keys(fields).length) await trx.updateTable('channels').set(fields).where('id', '=', id).execute();
    await rebuildAbilitiesFor(trx, [id]);
    return (await getChannel(trx, id))!;
  });
}

/**
 * A multi-key channel's edit (new-api's key_mode, multi_key_mode): the keys it adds, to check, and the new key list and
 * channel_info; null for a single-key channel, whose key is replaced as before.
 */
function multiKeyEdit(
  fields: ChannelFields,
  body: Body,
  current: { type: number; key: string; channel_info: unknown },
): { added: string[]; edit: ReturnType<typeof editKeys> } | null {
  const info = parseChannelInfo(current.channel_info);
  if (!info.is_multi_key || (fields.key === undefined && isBlank(body.multi_key_mode))) return null;
  const facts = factsOrRefuse(fields.type ?? current.type);
  const added = fields.key === undefined ? [] : keyList(facts, fields.key);
  return { added, edit: editKeys(facts, { key: current.key, info }, body, fields.key) };
}

export async function deleteChannel(ctx: AppContext, id: number): Promise<boolean> {
  return inTx(ctx, async (trx) => {
    const res = await trx.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
    await trx.deleteFrom('abilities').where('channel_id', '=', id).execute();
    return Number(res.numDeletedRows) > 0;
  });
}

async function deleteByIds(trx: Transaction<Database>, ids: number[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const res = await trx.deleteFrom('channels').where('id', 'in', chunk).executeTakeFirst();
    await trx.deleteFrom('abilities').where('channel_id', 'in', chunk).execute();
    n += Number(res.numDeletedRows);
  }
  return n;
}

/** DELETE /api/channel/disabled: removes manually (2) and automatically (3) disabled channels. */
export async function deleteDisabledChannels(ctx: AppContext): Promise<number> {
  return inTx(ctx, async (trx) => {
    const rows = await trx
      .selectFrom('channels')
      .select('id')
      .where('status', 'in', [CHANNEL_STATUS_MANUALLY_DISABLED, CHANNEL_STATUS_AUTO_DISABLED])
      .execute();
    return deleteByIds(
      trx,
      rows.map((r) => r.id),
    );
  });
}

function idList(v: unknown, emptyMessage: string): number[] {
  if (!Array.isArray(v) || !v.length) throw new ChannelInputError(emptyMessage);
  const ids = v.map(intOf);
  if (ids.some((x) => x === null || x <= 0)) throw new ChannelInputError('渠道 ID 无效');
  return [...new Set(ids as number[])];
}

export async function batchDeleteChannels(ctx: AppContext, body: Body): Promise<number> {
  const ids = idList(body?.ids, '请先选择要删除的通道！');
  return inTx(ctx, (trx) => deleteByIds(trx, ids));
}

export async function fixAbilities(ctx: AppContext): Promise<number> {
  return inTx(ctx, (trx) => rebuildAllAbilities(trx));
}

export async function batchSetTag(ctx: AppContext, body: Body): Promise<number> {
  const ids = idList(body?.ids, '请先选择要设置标签的渠道！');
  const tag = isBlank(body.tag) ? '' : str(body.tag, 'tag').trim();
  if (!tag) throw new ChannelInputError('标签不能为空！');
  return inTx(ctx, async (trx) => {
    let n = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const res = await trx
        .updateTable('channels')
        .set({ tag })
        .where('id', 'in', ids.slice(i, i + 500))
        .executeTakeFirst();
      n += Number(res.numUpdatedRows);
    }
    await rebuildAbilitiesFor(trx, ids);
    return n;
  });
}

async function tagMembers(db: Executor, tag: string) {
  return db
    .selectFrom('channels')
    .select(['id', 'tag', 'model_mapping', 'models', 'group', 'priority', 'weight', 'status'])
    .where('tag', '=', tag)
    .execute();
}

/**
 * PUT /api/channel/tag. As in new-api, an absent/empty models, groups or model_mapping means "unchanged";
 * new_tag, when given and different, renames the tag, and a blank new_tag dissolves it.
 */
export async function editTag(ctx: AppContext, body: Body): Promise<number> {
  const tag = isBlank(body?.tag) ? '' : str(body.tag, 'tag').trim();
  if (!tag) throw new ChannelInputError('标签不能为空！');
  const set: {
    tag?: string | null;
    model_mapping?: string;
    models?: string;
    group?: string;
    priority?: number;
    weight?: number;
  } = {};
  if (!isBlank(body.new_tag)) {
    const nt = str(body.new_tag, 'new_tag').trim();
    if (nt !== tag) set.tag = nt || null;
  }
  if (!isBlank(body.model_mapping) && !(typeof body.model_mapping === 'string' && body.model_mapping.trim() === '')) {
    set.model_mapping = jsonText(body.model_mapping, '模型映射必须是合法的 JSON 格式！')!;
  }
  if (!isBlank(body.models)) {
    const models = commaList(body.models, 'models');
    if (models) {
      checkModels(models);
      set.models = models;
    }
  }
  if (!isBlank(body.groups) || !isBlank(body.group)) {
    const group = commaList(isBlank(body.groups) ? body.group : body.groups, 'groups');
    if (group) {
      checkGroups(group);
      set.group = group;
    }
  }
  if (!isBlank(body.priority) && body.priority !== '') set.priority = parsePriority(body.priority);
  if (!isBlank(body.weight) && body.weight !== '') set.weight = parseWeight(body.weight);
  return inTx(ctx, async (trx) => {
    const members = await tagMembers(trx, tag);
    if (!members.length) throw new ChannelInputError('标签不存在');
    const changes = members.some((m) =>
      (Object.keys(set) as Array<keyof typeof set>).some((k) => (m[k] ?? null) !== (set[k] ?? null)),
    );
    if (!Object.keys(set).length || !changes) throw new ChannelInputError('没有任何修改！');
    await trx.updateTable('channels').set(set).where('tag', '=', tag).execute();
    await rebuildAbilitiesFor(
      trx,
      members.map((m) => m.id),
    );
    return members.length;
  });
}

/** POST /api/channel/tag/enabled|disabled: enable (1) or manually disable (2) every member of a tag. */
export async function setTagStatus(ctx: AppContext, body: Body, status: 1 | 2): Promise<number> {
  const tag = isBlank(body?.tag) ? '' : str(body.tag, 'tag').trim();
  if (!tag) throw new ChannelInputError('标签不能为空！');
  return inTx(ctx, async (trx) => {
    const members = await tagMembers(trx, tag);
    if (!members.length) throw new ChannelInputError('标签不存在');
    await trx.updateTable('channels').set({ status }).where('tag', '=', tag).execute();
    await rebuildAbilitiesFor(
      trx,
      members.map((m) => m.id),
    );
    return members.length;
  });
}

/** A channel test's outcome on the channel's row: when it ran and the upstream's response time in ms. */
export async function recordChannelTest(db: Executor, id: number, seconds: number): Promise<void> {
  await db
    .updateTable('channels')
    .set({ test_time: Math.floor(Date.now() / 1000), response_time: Math.round(seconds * 1000) })
    .where('id', '=', id)
    .execute();
}

/** An upstream balance just queried (relay/channel-probe.ts), stored with the time it was read. */
export async function storeChannelBalance(db: Executor, id: number, balance: number): Promise<void> {
  await db
    .updateTable('channels')
    .set({ balance, balance_updated_time: Math.floor(Date.now() / 1000) })
    .where('id', '=', id)
    .execute();
}
