// The console's input for a custom OAuth provider, checked with zod: a module of its own, loaded by the first
// create or update (services/oauth/custom-providers.ts), so that zod is not loaded by a gateway that never edits one
// (docs/perf/startup-loads.md).
import { z } from 'zod';
import { UserFacingError } from '../users.js';

const httpUrl = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .refine((v) => v === '' || /^https?:\/\/[^\s/]+/i.test(v), { message: '必须是 http(s) 地址' });

/** Dotted paths into the user-info JSON (`sub`, `data.user.id`, `emails.0.value`). */
const fieldPath = z
  .string()
  .trim()
  .max(128)
  .regex(/^[A-Za-z0-9_\-:]+(\.[A-Za-z0-9_\-:]+)*$|^$/, { message: '字段路径只能由字母、数字、_、-、: 和 . 组成' });

// Every field optional: a create is checked for the required ones after defaults, an update after merging.
const providerFields = z.object({
  name: z.string().trim().min(1).max(64),
  slug: z
    .string()
    .trim()
    .toLowerCase()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9-]+$/, { message: 'Slug 只能包含小写字母、数字和连字符' }),
  icon: z.string().trim().max(128),
  kind: z.literal('oauth_code', { message: '本网关只支持 oauth_code 类型' }),
  enabled: z.boolean(),
  client_id: z.string().trim().max(256),
  client_secret: z.string().max(512),
  authorization_endpoint: httpUrl(512),
  token_endpoint: httpUrl(512),
  user_info_endpoint: httpUrl(512),
  scopes: z.string().trim().max(256),
  user_id_field: fieldPath,
  username_field: fieldPath,
  display_name_field: fieldPath,
  email_field: fieldPath,
  well_known: httpUrl(512),
  auth_style: z.union([z.literal(0), z.literal(1), z.literal(2)]),
});

export type ProviderInput = z.infer<typeof providerFields>;

const createSchema = providerFields.partial().required({ name: true, slug: true });
const updateSchema = providerFields.partial();

/** new-api's wording for a body that does not parse: the first problem, with its field. */
function parsed<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  throw new UserFacingError(`无效的请求参数: ${field ? `${field}: ` : ''}${issue?.message ?? ''}`);
}

export const parseCreate = (body: unknown) => parsed(createSchema, body);
export const parseUpdate = (body: unknown) => parsed(updateSchema, body);
