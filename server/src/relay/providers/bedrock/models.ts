// Claude model names as clients send them → Bedrock model ids, and the cross-region inference profile that some of
// them must (or may) be called through. Newer Claude models have no on-demand throughput in a single region: they are
// only reachable through a geography's inference profile, whose id is the model id prefixed with `us.`, `eu.` or
// `apac.`. Like new-api we add the prefix whenever the channel's region belongs to a geography the model has a profile
// in, and leave the plain id otherwise.

type Geography = 'us' | 'eu' | 'apac';

interface BedrockModel {
  id: string;
  /** the geographies with a cross-region inference profile for this model */
  profiles: readonly Geography[];
}

const ALL: readonly Geography[] = ['us', 'eu', 'apac'];

const CLAUDE_ON_BEDROCK: Record<string, BedrockModel> = {
  'claude-3-haiku-20240307': { id: 'anthropic.claude-3-haiku-20240307-v1:0', profiles: ALL },
  'claude-3-sonnet-20240229': { id: 'anthropic.claude-3-sonnet-20240229-v1:0', profiles: ALL },
  'claude-3-opus-20240229': { id: 'anthropic.claude-3-opus-20240229-v1:0', profiles: ['us'] },
  'claude-3-5-sonnet-20240620': { id: 'anthropic.claude-3-5-sonnet-20240620-v1:0', profiles: ALL },
  'claude-3-5-sonnet-20241022': { id: 'anthropic.claude-3-5-sonnet-20241022-v2:0', profiles: ['us', 'apac'] },
  'claude-3-5-haiku-20241022': { id: 'anthropic.claude-3-5-haiku-20241022-v1:0', profiles: ['us'] },
  'claude-3-7-sonnet-20250219': { id: 'anthropic.claude-3-7-sonnet-20250219-v1:0', profiles: ALL },
  'claude-sonnet-4-20250514': { id: 'anthropic.claude-sonnet-4-20250514-v1:0', profiles: ALL },
  'claude-opus-4-20250514': { id: 'anthropic.claude-opus-4-20250514-v1:0', profiles: ['us'] },
  'claude-opus-4-1-20250805': { id: 'anthropic.claude-opus-4-1-20250805-v1:0', profiles: ['us'] },
  'claude-sonnet-4-5-20250929': { id: 'anthropic.claude-sonnet-4-5-20250929-v1:0', profiles: ALL },
  'claude-haiku-4-5-20251001': { id: 'anthropic.claude-haiku-4-5-20251001-v1:0', profiles: ALL },
  'claude-opus-4-5-20251101': { id: 'anthropic.claude-opus-4-5-20251101-v1:0', profiles: ALL },
};

/** The Claude models this relay calls on Bedrock, by the names clients send (the console's model list for a Bedrock
 * channel: its key is an AWS secret, never sent to list models). */
export const BEDROCK_MODELS: readonly string[] = Object.keys(CLAUDE_ON_BEDROCK);

const PROFILES_BY_ID = new Map(Object.values(CLAUDE_ON_BEDROCK).map((m) => [m.id, m.profiles]));

/** The geography of an AWS region: `us-east-1` → us, `eu-west-3` → eu, `ap-northeast-1` → apac; others none. */
export function regionGeography(region: string): Geography | null {
  const head = region.split('-', 1)[0];
  if (head === 'us') return region.startsWith('us-gov-') ? null : 'us';
  if (head === 'eu') return 'eu';
  if (head === 'ap') return 'apac';
  return null;
}

/**
 * The model id to put in the Bedrock URL: a known Claude name mapped and, in a region whose geography has an
 * inference profile for it, prefixed; any other name (an id already in Bedrock form, with or without a profile prefix) unchanged.
 */
export function bedrockModelId(model: string, region: string): string {
  const known = CLAUDE_ON_BEDROCK[model];
  if (!known) return model;
  const geography = regionGeography(region);
  return geography && known.profiles.includes(geography) ? `${geography}.${known.id}` : known.id;
}

/** The geographies with an inference profile for a Bedrock model id (tests, the channel form). */
export function inferenceProfiles(modelId: string): readonly Geography[] {
  return PROFILES_BY_ID.get(modelId) ?? [];
}
