// One INSERT … SELECT generate_series statement (PostgreSQL) that fills `logs` with `rows` synthetic rows spread
// evenly over the `spanDays` days before `now` (ids ascending with time, as the relay writes them): 1,000 users,
// 3 tokens each, 8 models, 50 channels; mostly consume rows (type 2), every 97th an error (5), every 1,000th a top-up.
// Shared by bench/log-million.mjs and server/test/logs/log-index-plan.test.ts.

export const SEED_MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'claude-3-5-sonnet',
  'gemini-1.5-pro',
  'deepseek-chat',
  'o3-mini',
  'text-embedding-3-small',
  'qwen-max',
];
export const SEED_USERS = 1000;

/** @param {{ rows: number, now: number, spanDays?: number }} o */
export function seedLogsSql({ rows, now, spanDays = 90 }) {
  const span = spanDays * 86_400;
  const models = SEED_MODELS.map((m) => `'${m}'`).join(',');
  return `INSERT INTO logs (user_id, created_at, type, content, username, token_name, model_name, quota,
      prompt_tokens, completion_tokens, use_time, is_stream, channel_id, token_id, "group", other)
    SELECT u, ${now - span} + (g::bigint * ${span}) / ${rows},
      CASE WHEN g % 1000 = 0 THEN 1 WHEN g % 97 = 0 THEN 5 ELSE 2 END,
      '', 'user' || u, 'tok' || u || '-' || (g % 3), (ARRAY[${models}])[1 + g % ${SEED_MODELS.length}],
      g % 5000, 100 + g % 900, 10 + g % 400, 1 + g % 9, g % 2 = 0, 1 + g % 50, u * 3 + g % 3, 'default', ''
    FROM generate_series(1, ${rows}) AS g, LATERAL (SELECT 1 + (g::bigint * 7919) % ${SEED_USERS} AS u) AS x`;
}
