// Channel facts of Dify: the key is the app's API key; `other` says what the app is (chat, agent, completion or
// workflow; empty: chat), which decides the API the relay calls. Dify lists no models: a channel serves its app under
// any model name, `dify` by default.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';
import { DIFY_APPS, isDifyApp } from './apps.js';

function appProblem(other: string | undefined): FieldProblem | null {
  const v = other?.trim().toLowerCase() ?? '';
  if (!v || isDifyApp(v)) return null;
  return { field: 'other', message: `Dify 应用类型只能是 ${DIFY_APPS.join('、')} 之一（留空为 chat）` };
}

export const difyChannelFacts = (): ChannelFacts =>
  plainFacts({
    other: { kind: 'app_type', hint: 'chat' },
    check: ({ other }) => appProblem(other),
    models: { fixed: ['dify'] },
  });
