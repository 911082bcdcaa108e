// Step 3, admit: the per-user model rate limit (new-api-compat.md §10), then Distribute's access checks (token IP
// allow list, model limits, group; new-api-compat.md §4.3) and the playground's group choice.
import { isUsableGroup } from '../../services/groups.js';
import { checkAccess } from '../auth.js';
import { RelayError } from '../errors.js';
import { modelRateLimit } from '../rate-limit.js';
import type { RelayState } from './state.js';

export async function admit(s: RelayState): Promise<void> {
  const { ctx, caller, body, opts } = s;
  if (!opts.playground && ctx.options.bool('ModelRequestRateLimitEnabled')) {
    const limited = modelRateLimit(ctx).check(caller.user.id);
    if (limited) await limited;
    s.rateKey = caller.user.id;
  }
  let group = checkAccess(ctx, caller, s.req.ip, s.model);
  if (opts.playground && typeof body.group === 'string' && body.group && body.group !== group) {
    if (!isUsableGroup(ctx, group, body.group))
      throw new RelayError(403, '无权访问该分组', 'new_api_error', 'group_not_allowed');
    group = body.group;
  }
  if (opts.playground && 'group' in body) {
    // the playground's group choice is ours, not an upstream parameter (OpenAI refuses unknown ones)
    delete body.group;
    s.raw = Buffer.from(JSON.stringify(body));
  }
  s.group = group;
}
