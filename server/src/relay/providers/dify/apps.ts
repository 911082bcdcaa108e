// What a Dify channel's app is, from its `other` field: `chat` (a chatbot or chatflow: the default, '' included),
// `agent`, `completion` or `workflow`. Anything else is refused on save (channel.ts), so the relay never guesses.
export const DIFY_APPS = ['chat', 'agent', 'completion', 'workflow'] as const;

export type DifyApp = (typeof DIFY_APPS)[number];

export function isDifyApp(value: string): value is DifyApp {
  return (DIFY_APPS as readonly string[]).includes(value);
}

export function difyAppOf(other: string): DifyApp {
  const v = other.trim().toLowerCase();
  return isDifyApp(v) ? v : 'chat';
}
