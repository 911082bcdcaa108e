// Channel facts of Coze: the key is a personal access token (pat_…), `other` the bot id every request goes to
// (required: without it Coze refuses every chat). Coze lists no models: a channel serves its bot under any model name.
import { plainFacts, type ChannelFacts, type FieldProblem } from '../channel-facts-contract.js';

function botProblem(other: string | undefined): FieldProblem | null {
  if (other === undefined) return null;
  const id = other.trim();
  if (!id) return { field: 'other', message: '请填写 Coze 智能体的 Bot ID' };
  if (!/^\d+$/.test(id)) return { field: 'other', message: 'Coze 的 Bot ID 只能包含数字' };
  return null;
}

export const cozeChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'pat_xxx',
    other: { kind: 'bot_id', hint: '7342866812345678901' },
    check: ({ other }) => botProblem(other),
    models: { fixed: ['coze'] },
  });
